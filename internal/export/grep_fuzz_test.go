package export

import (
	"regexp"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzGrepMatch feeds any bytes, cut anywhere, through Grep's line reader
// and checks every hit: its match's bytes lie within the line's and the
// stream's, its time is one the stream had, and its line is valid UTF-8.
func FuzzGrepMatch(f *testing.F) {
	f.Add([]byte("prompt$ "), []byte("echo needle\r\nneedle\r\n"), "needle")
	f.Add([]byte("needXX"), []byte("\b\ble\r\n\x1b[2Kcaf\xc3"), "e")
	f.Add([]byte("a\x1b[5Cb\x1b[1;1H"), []byte("\x1b[K\tx\x1b[3P"), "a *b|x")
	f.Fuzz(func(t *testing.T, first, second []byte, pat string) {
		re, err := regexp.Compile(pat)
		if err != nil {
			return
		}
		t0 := time.Unix(1000, 0)
		t1 := t0.Add(time.Minute)
		total := uint64(len(first) + len(second))
		g := &lineText{emit: func(line string, cells []drawnCell, lineStart uint64, at time.Time) error {
			if !utf8.ValidString(line) {
				t.Fatalf("line %q is not UTF-8", line)
			}
			m := re.FindStringIndex(line)
			if m == nil {
				return nil
			}
			h := matchHit(line, cells, m[0], m[1], lineStart, at)
			if h.Offset > h.End || h.End > total || h.Offset < lineStart {
				t.Fatalf("hit [%d, %d) of a line from %d, %d bytes in all", h.Offset, h.End, lineStart, total)
			}
			if !h.Time.Equal(t0) && !h.Time.Equal(t1) {
				t.Fatalf("hit time %v is none of the stream's", h.Time)
			}
			return nil
		}}
		if err := g.feed(0, t0, first); err != nil {
			t.Fatal(err)
		}
		if err := g.feed(uint64(len(first)), t1, second); err != nil {
			t.Fatal(err)
		}
		if err := g.end(); err != nil {
			t.Fatal(err)
		}
	})
}
