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
// meets ErrCorrupt, skips to SkipCorrupt, and every byte outside the
// record the flip hit comes back exactly, at its offset.
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
	recs := layout(t, segPath(src, segs[1]), segs[1])
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
		var skipped uint64
		lo, hi := lost(recs, int64(pos), int64(pos+1))
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
				if off != lo || next != hi {
					t.Fatalf("trial %d (byte %d): skip from %d to %d, the damaged record is [%d, %d)", trial, pos, off, next, lo, hi)
				}
				c.Seek(next)
				skipped += next - off
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
		if skipped != hi-lo {
			t.Fatalf("trial %d (byte %d): skipped %d bytes, the damaged record holds %d", trial, pos, skipped, hi-lo)
		}
		c.Close()
		l.Close()
	}
}
