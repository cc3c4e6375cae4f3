package screen

import (
	"math/rand"
	"strings"
	"testing"
)

// Every test of the package checks the rows' marks of blank cells: each
// one contentEnd uses, and every row's after each Write.
func init() { verifyMarks = true }

// withoutMarkChecks turns the checks off for a benchmark: they would be
// most of what it measures.
func withoutMarkChecks(b *testing.B) {
	verifyMarks = false
	b.Cleanup(func() { verifyMarks = true })
}

// Rows that plain output scrolls through know where their blank cells
// start, and keep it right through what printing does to them: auto-wrap
// in a colored style, a wide character cut in half at either end of a
// run. Anything else forgets the marks, and the history is packed as the
// scan packs it.
func TestBlankMarks(t *testing.T) {
	s := New(40, 5, Options{})
	s.Write([]byte(strings.Repeat("plain line\r\n", 20)))
	known := 0
	for i := range s.normal.lines {
		if l := &s.normal.lines[i]; l.epoch == s.epoch && int(l.blankFrom) < len(l.cells) {
			known++
		}
	}
	if known < len(s.normal.lines)-1 {
		t.Fatalf("%d of %d rows know where their blank cells start after plain output", known, len(s.normal.lines))
	}
	// Each of these writes cells after rows got their marks; contentEnd
	// panics if a mark it uses is wrong, and the history must read back
	// as the text written.
	steps := []string{
		"\x1b[44m" + strings.Repeat("w", 45) + "\x1b[m\r\n", // auto-wrap erases in blue
		"ab\u4e16\u754c\r\x1b[Cx\r\n",                       // a wide character cut by a run
		"\x1b[2;1H\x1b[41m\x1b[K\x1b[m\x1b[5;1H\r\n",        // erase a row in red
		"\x1b[3;1H\x1b[5@\x1b[2P\x1b[5;1H\n",                // insert and delete cells
		"\x1b[1;1H\x1b[31mz\x1b[20b\x1b[m\x1b[5;1H\n",       // REP
		"\x1b#8\x1b[5;1H\n\n\n\n\n",                         // DECALN
		"e\u0301\u0302\r\n",                                 // combining marks
		"\x1b[2;4r\x1b[4;1Hregion\n\n\x1b[r\x1b[5;1H\n",     // a scroll region
		"\x1b[?1049hALT\r\n\x1b[?1049l\n",                   // the alternate screen
	}
	for _, step := range steps {
		s.Write([]byte(step))
		s.Write([]byte(strings.Repeat("after\r\n", 6)))
	}
	s.Resize(30, 4)
	s.Write([]byte(strings.Repeat("resized\r\n", 6)))
	if got := s.Text(-1); !strings.Contains(got, "resized") || !strings.Contains(got, "plain line") {
		t.Fatalf("history after the steps:\n%s", got)
	}
}

// Random output of every kind keeps the marks right (contentEnd and
// Write check them), at several widths, across resizes and checkpoints.
func TestBlankMarksRandom(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	pieces := []string{
		"text ", "more text here ", "\r\n", "\n", "\r", "\x1b[31m", "\x1b[44m", "\x1b[m", "\x1b[K", "\x1b[1K",
		"\x1b[2K", "\x1b[J", "\x1b[2J", "\x1b[5@", "\x1b[3P", "\x1b[4X", "\x1b[2L", "\x1b[2M", "\x1b[S", "\x1b[T",
		"\x1b[3;7r", "\x1b[r", "\x1b[H", "\x1b[10G", "\x1b[4;20H", "\x1bM", "\x1bD", "\x1bE", "\t", "\b",
		"\u4e16\u754c", "e\u0301", "\x1b[4h", "\x1b[4l", "\x1b(0qqq\x1b(B", "\x1b[?7l", "\x1b[?7h",
		"\x1b[?1049h", "\x1b[?1049l", "\x1b[7b", "\x1b#8", "\x1bc", "\x1b[20h", "\x1b[20l", "\x1b[?45h",
	}
	for round := range 300 {
		cols := 2 + r.Intn(120)
		s := New(cols, 1+r.Intn(12), Options{ScrollbackLines: 50})
		for range 200 {
			var b strings.Builder
			for range r.Intn(20) {
				if r.Intn(3) == 0 {
					b.WriteString(strings.Repeat("x", r.Intn(2*cols)))
				}
				b.WriteString(pieces[r.Intn(len(pieces))])
			}
			s.Write([]byte(b.String()))
			switch r.Intn(40) {
			case 0:
				s.Resize(2+r.Intn(120), 1+r.Intn(12))
			case 1:
				d, _ := s.MarshalBinary()
				if err := s.UnmarshalBinary(d); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
		}
	}
}
