package screen

import (
	"fmt"
	"strings"
	"testing"
)

// A terminal that drew a session's output up to some point and is given
// SnapshotKeep of the session's screen now, with the lines that scrolled
// away since, keeps its history, gains those lines below it, and shows
// the session's screen with its modes: the whole history reads as if it
// had drawn every byte.
func TestSnapshotKeep(t *testing.T) {
	for _, c := range []struct {
		name        string
		before, gap string // what the terminal drew; what it missed
	}{
		{"a shell's burst", "", ""},
		{"a full-screen program left on, modes on", "\x1b[?1049h\x1b[?1h\x1b[?2004h\x1b[?1000h\x1b[5;10r\x1b[?6h\x1b[1;31mvim", "\x1b[?1049l"},
		{"a program on the alternate screen now", "", "\x1b[?1049h\x1b[Hfull screen"},
		{"tab stops, charset and insert mode", "\x1b[3g\x1b[1;5H\x1bH\x1b(0\x1b[4h", ""},
		{"wrapped lines at the seam", strings.Repeat("w", 150), strings.Repeat("v", 170)},
	} {
		t.Run(c.name, func(t *testing.T) {
			const cols, rows = 80, 10
			session := New(cols, rows, Options{})
			term := New(cols, rows, Options{})
			var out strings.Builder
			for i := 1; i <= 100; i++ {
				fmt.Fprintf(&out, "%d\r\n", i)
			}
			out.WriteString(c.before)
			session.Write([]byte(out.String()))
			term.Write([]byte(out.String()))
			had := session.Scrolled()
			// What the terminal misses: a burst, then the gap's bytes.
			var missed strings.Builder
			missed.WriteString("\x1b[?1049l\x1b[r\x1b[?6l\x1b[m\x1b[4l\x1b(B")
			for i := 101; i <= 500; i++ {
				fmt.Fprintf(&missed, "%d\r\n", i)
			}
			missed.WriteString(c.gap)
			session.Write([]byte(missed.String()))
			k := int(session.Scrolled() - had)
			term.Write(session.SnapshotKeep(k))

			ref := New(cols, rows, Options{}) // a terminal that drew every byte
			ref.Write([]byte(out.String() + missed.String()))
			want, got := ref.Dump(-1), term.Dump(-1)
			if g, w := dumpText(got), dumpText(want); g != w {
				t.Fatalf("history and screen:\n%s\nwant\n%s", g, w)
			}
			if got.Modes != want.Modes || got.Alt != want.Alt || got.Cursor != want.Cursor {
				t.Fatalf("modes %+v alt %v cursor %+v, want %+v %v %+v", got.Modes, got.Alt, got.Cursor, want.Modes, want.Alt, want.Cursor)
			}
			if more := term.Snapshot(0); string(more) != string(session.Snapshot(0)) {
				t.Fatalf("the terminal's state differs from the session's:\n%q\n%q", more, session.Snapshot(0))
			}
		})
	}
}

func dumpText(d Dump) string {
	var b strings.Builder
	for _, l := range append(d.Scrollback, d.Screen...) {
		for _, c := range l.Cells {
			b.WriteString(c.Ch)
		}
		b.WriteString("|\n")
	}
	return b.String()
}
