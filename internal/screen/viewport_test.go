package screen

import (
	"fmt"
	"strings"
	"testing"
)

// Viewport painted on a terminal (another Screen) of the terminal's size
// shows the session's screen clipped to it, the rest marked, and nothing
// that was on the terminal before: the terminal is filled with stale
// characters first.
func TestViewport(t *testing.T) {
	for _, c := range []struct {
		name       string
		cols, rows int    // the session's
		out        string // its output
		tc, tr     int    // the terminal's
		want       string // the terminal's text, rows joined by |
		cursor     [2]int // where the terminal's cursor ends
	}{
		{"smaller: clipped, never wrapped", 10, 3, "0123456789\r\nabcdefghij\r\nXY", 4, 2,
			"0123|abcd", [2]int{3, 1}},
		{"larger: the rest marked", 4, 2, "ab\r\ncd", 6, 3,
			"ab  ··|cd  ··|······", [2]int{2, 1}},
		{"equal", 3, 2, "abc\r\nde", 3, 2, "abc|de", [2]int{2, 1}},
		{"a wide character cut by the edge is a blank", 6, 1, "ab界cd", 3, 1, "ab", [2]int{2, 0}},
		{"a wide character inside", 6, 1, "a界cd", 4, 1, "a界c", [2]int{3, 0}},
		{"the cursor outside the terminal stays put", 10, 5, "\x1b[5;9Hz", 4, 2, "", [2]int{3, 1}},
		{"a one-cell terminal", 10, 5, "Q", 1, 1, "Q", [2]int{1, 0}},
		{"no size is one cell", 10, 5, "Q", 0, -3, "Q", [2]int{1, 0}},
		{"the alternate screen", 10, 3, "normal\x1b[?1049h\x1b[Hfull", 5, 2, "full", [2]int{4, 0}},
		{"a scroll region and origin mode do not leak", 10, 5, "\x1b[2;3r\x1b[?6h\x1b[Hx", 3, 3, "|x", [2]int{1, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(c.cols, c.rows, Options{})
			s.Write([]byte(c.out))
			term := New(max(c.tc, 2), max(c.tr, 1), Options{})
			// Stale characters everywhere, in a style, and a scroll region.
			for y := range max(c.tr, 1) {
				term.Write([]byte(fmt.Sprintf("\x1b[%d;1H\x1b[7m%s", y+1, strings.Repeat("#", max(c.tc, 1)))))
			}
			term.Write([]byte("\x1b[m\x1b[2;3r"))
			term.Write(s.Viewport(c.tc, c.tr, '·'))
			var got []string
			for _, l := range strings.Split(strings.TrimRight(term.Text(0), "\n"), "\n") {
				got = append(got, strings.TrimRight(l, " "))
			}
			text := strings.TrimRight(strings.Join(got, "|"), "|")
			if text != c.want {
				t.Errorf("terminal shows %q, want %q", text, c.want)
			}
			if x, y := term.CursorPosition(); [2]int{x, y} != c.cursor {
				t.Errorf("cursor at %d,%d, want %v", x, y, c.cursor)
			}
			if d := term.Dump(0); !d.Modes.Wraparound {
				t.Error("autowrap left off")
			}
		})
	}
}

// Styles are kept cell by cell and the marked area is dim, not the
// session's last style.
func TestViewportStyles(t *testing.T) {
	s := New(4, 1, Options{})
	s.Write([]byte("a\x1b[1;31mbc\x1b[0md\x1b[44m"))
	term := New(6, 1, Options{})
	term.Write(s.Viewport(6, 1, '.'))
	got := term.ANSI(0)
	for _, want := range []string{"a", "\x1b[0;1;31mbc", "\x1b[0;2m.."} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

// Whatever the session printed and whatever was on the terminal, a paint
// leaves the terminal the same: every cell is written, so nothing stale
// shows through. SnapshotKeep never fails either.
func FuzzViewport(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, size uint16, plan []byte, data []byte) {
		if len(plan) > 64 || len(data) > 4096 {
			return
		}
		s := fuzzRun(t, size, plan, data, false)
		cols, rows := int(size>>8&0x3F)+2, int(size>>3&0x1F)+1
		clean := New(cols, rows, Options{})
		clean.Write(s.Viewport(cols, rows, '·'))
		dirty := New(cols, rows, Options{})
		dirty.Write(data) // what the terminal had, modes and all
		dirty.Write(s.Viewport(cols, rows, '·'))
		want, got := clean.Dump(0), dirty.Dump(0)
		// A row's soft-wrap flag is not drawn: a terminal keeps it until
		// the row is printed across its end.
		for i := range got.Screen {
			got.Screen[i].Wrapped, want.Screen[i].Wrapped = false, false
		}
		// Modes the paint does not set (mouse, focus: what the terminal
		// reports, not what it shows) are the terminal's own.
		got.Modes.SendFocus, got.Modes.MouseTracking = want.Modes.SendFocus, want.Modes.MouseTracking
		got.Title, got.Alt = want.Title, want.Alt
		if d := Diff(&want, &got, 5); d != nil {
			t.Fatalf("a paint over a used terminal differs from one over a clean one:\n  %s", strings.Join(d, "\n  "))
		}
		_ = s.SnapshotKeep(-1)
	})
}
