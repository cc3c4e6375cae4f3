package outlog

import (
	"io"
	"testing"
)

func benchAppend(b *testing.B, size int) {
	l := openT(b, b.TempDir(), Options{})
	defer l.Close()
	p := make([]byte, size)
	for i := range p {
		p[i] = byte(i)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Append(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppend64K(b *testing.B) { benchAppend(b, 64<<10) }
func BenchmarkAppend4K(b *testing.B)  { benchAppend(b, 4<<10) }

func BenchmarkCursorRead(b *testing.B) {
	l := openT(b, b.TempDir(), Options{Retention: 1 << 30, Sync: SyncNever})
	defer l.Close()
	p := make([]byte, 4<<10) // the holder's typical pty chunk
	for range (32 << 20) / len(p) {
		l.Append(p)
	}
	c := l.Cursor(0)
	defer c.Close()
	buf := make([]byte, 128<<10)
	const perOp = 1 << 20
	b.SetBytes(perOp)
	b.ReportAllocs()
	for b.Loop() {
		for got := 0; got < perOp; {
			n, err := c.Read(buf)
			if err == io.EOF {
				c.Seek(0)
				continue
			}
			if err != nil {
				b.Fatal(err)
			}
			got += n
		}
	}
}
