package outlog

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"testing"
)

// A byte flipped anywhere in a finished segment never stalls a reader: it
// meets ErrCorrupt, skips to SkipCorrupt, and every byte outside the damaged
// segment comes back exactly.
func TestCorruptMiddleSegmentNeverStalls(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	src := t.TempDir()
	w := openT(t, src, Options{SegmentSize: 64 << 10, Retention: 1 << 20})
	var want []byte
	for len(want) < 200<<10 {
		p := randBytes(r, 1+r.IntN(3000))
		w.Append(p)
		want = append(want, p...)
	}
	w.Close()
	segs := segStarts(t, src)
	if len(segs) < 3 {
		t.Fatalf("%d segments", len(segs))
	}
	orig, err := os.ReadFile(segPath(src, segs[1]))
	if err != nil {
		t.Fatal(err)
	}
	for trial := 0; trial < 60; trial++ {
		pos := r.IntN(len(orig))
		if trial < 20 {
			pos = trial // every byte of the first headers
		}
		dir := t.TempDir()
		for _, s := range segs {
			b, _ := os.ReadFile(segPath(src, s))
			if s == segs[1] {
				b = bytes.Clone(orig)
				b[pos] ^= 0x5a
			}
			os.WriteFile(segPath(dir, s), b, 0o600)
		}
		l := openT(t, dir, Options{ReadOnly: true})
		c := l.Cursor(0)
		buf := make([]byte, ReadBuffer)
		var got []byte
		skipped := false
		for steps := 0; ; steps++ {
			if steps > 10000 {
				t.Fatalf("trial %d (byte %d): reader stalled at %d", trial, pos, c.Offset())
			}
			off := c.Offset()
			n, err := c.Read(buf)
			if n > 0 {
				if !bytes.Equal(buf[:n], want[off:off+uint64(n)]) {
					i := 0
					for buf[i] == want[off+uint64(i)] {
						i++
					}
					t.Fatalf("trial %d (byte %d): wrong bytes at %d (+%d of %d); segments %v", trial, pos, off, i, n, segs)
				}
				got = append(got, buf[:n]...)
				continue
			}
			if errors.Is(err, ErrCorrupt) {
				next := l.SkipCorrupt(off)
				if next <= off || off < segs[1] || next > segs[2] {
					t.Fatalf("trial %d (byte %d): skip from %d to %d, damaged segment is [%d, %d)", trial, pos, off, next, segs[1], segs[2])
				}
				c.Seek(next)
				skipped = true
				continue
			}
			if err == io.EOF {
				break
			}
			t.Fatalf("trial %d (byte %d): read at %d: %v", trial, pos, off, err)
		}
		if c.Offset() != uint64(len(want)) {
			t.Fatalf("trial %d (byte %d): reader ended at %d, want %d", trial, pos, c.Offset(), len(want))
		}
		if !skipped {
			t.Fatalf("trial %d (byte %d): the damage went unnoticed", trial, pos)
		}
		c.Close()
		l.Close()
	}
}
