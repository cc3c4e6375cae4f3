package screen

import (
	"strings"
	"testing"
)

// Golden tests: bytes in, screen out. Each expectation is what xterm.js
// (with the Unicode 11 addon) shows for the input.

// A step writes bytes or resizes.
type step struct {
	in         string
	cols, rows int // resize when cols > 0
}

type golden struct {
	name       string
	cols, rows int
	in         string // written first, in one Write
	steps      []step // then these
	// screen is the expected screen: one row per line, trailing blanks
	// trimmed, rows left out at the end blank; a row written "~text"
	// continues the row above it (soft-wrapped).
	screen string
	// scrollback is the expected scrollback, in the same form ("" for
	// none).
	scrollback string
	cursor     [2]int // x, y
	check      func(t *testing.T, s *Screen, d Dump)
}

func (g golden) run(t testing.TB) *Screen {
	s := New(g.cols, g.rows, Options{})
	s.Write([]byte(g.in))
	for _, st := range g.steps {
		if st.cols > 0 {
			s.Resize(st.cols, st.rows)
		} else {
			s.Write([]byte(st.in))
		}
	}
	return s
}

// render is a dump's lines in the golden form.
func render(lines []DumpLine) string {
	var rows []string
	for _, l := range lines {
		r := l.Text()
		if l.Wrapped {
			r = "~" + r
		}
		rows = append(rows, r)
	}
	for len(rows) > 0 && rows[len(rows)-1] == "" {
		rows = rows[:len(rows)-1]
	}
	return strings.Join(rows, "\n")
}

func cellOf(d Dump, x, y int) DumpCell {
	l := d.Screen[y]
	if x < len(l.Cells) {
		return l.Cells[x]
	}
	return DumpCell{Ch: " ", W: 1}
}

func wantCell(t *testing.T, d Dump, x, y int, want DumpCell) {
	t.Helper()
	if got := cellOf(d, x, y); got != want {
		t.Errorf("cell %d,%d = %+v, want %+v", x, y, got, want)
	}
}

var goldens = []golden{
	// Printing and wrapping.
	{name: "crlf", cols: 10, rows: 3, in: "ab\r\ncd", screen: "ab\ncd", cursor: [2]int{2, 1}},
	{name: "lf-keeps-column", cols: 10, rows: 3, in: "ab\ncd", screen: "ab\n  cd", cursor: [2]int{4, 1}},
	{name: "pending-wrap", cols: 5, rows: 2, in: "abcde", screen: "abcde", cursor: [2]int{4, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			if s.cur.x != 5 {
				t.Errorf("x = %d, want 5 (pending wrap)", s.cur.x)
			}
		}},
	{name: "autowrap", cols: 5, rows: 2, in: "abcdefg", screen: "abcde\n~fg", cursor: [2]int{2, 1}},
	{name: "pending-wrap-cr", cols: 5, rows: 2, in: "abcde\rX", screen: "Xbcde", cursor: [2]int{1, 0}},
	{name: "pending-wrap-lf", cols: 5, rows: 3, in: "abcde\nX", screen: "abcde\n    X", cursor: [2]int{4, 1}},
	{name: "wrap-scrolls", cols: 3, rows: 2, in: "abcdefgh", scrollback: "abc", screen: "~def\n~gh", cursor: [2]int{2, 1}},
	{name: "nowrap", cols: 5, rows: 2, in: "\x1b[?7labcdefg", screen: "abcdg", cursor: [2]int{4, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			if d.Modes.Wraparound {
				t.Error("wraparound still on")
			}
		}},
	{name: "scrollback", cols: 5, rows: 2, in: "1\r\n2\r\n3\r\n4", scrollback: "1\n2", screen: "3\n4", cursor: [2]int{1, 1}},
	{name: "tab-stops", cols: 20, rows: 2, in: "a\tb\tc", screen: "a       b       c", cursor: [2]int{17, 0}},
	{name: "tab-at-end", cols: 10, rows: 2, in: "\t\t\tX", screen: "         X", cursor: [2]int{9, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			if s.cur.x != 10 {
				t.Errorf("x = %d, want 10", s.cur.x)
			}
		}},
	{name: "backspace", cols: 10, rows: 2, in: "abc\b\bX", screen: "aXc", cursor: [2]int{2, 0}},
	{name: "backspace-from-pending-wrap", cols: 3, rows: 2, in: "abc\bX", screen: "aXc", cursor: [2]int{2, 0}},

	// Wide and combining characters.
	{name: "wide", cols: 10, rows: 2, in: "中文x", screen: "中文x", cursor: [2]int{5, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			wantCell(t, d, 0, 0, DumpCell{Ch: "中", W: 2})
			wantCell(t, d, 1, 0, DumpCell{Ch: "", W: 0})
			wantCell(t, d, 4, 0, DumpCell{Ch: "x", W: 1})
		}},
	{name: "wide-at-margin", cols: 5, rows: 2, in: "abcd中", screen: "abcd\n~中", cursor: [2]int{2, 1},
		check: func(t *testing.T, s *Screen, d Dump) {
			wantCell(t, d, 4, 0, DumpCell{Ch: " ", W: 1})
		}},
	{name: "wide-at-margin-nowrap", cols: 5, rows: 2, in: "\x1b[?7labcd中", screen: "abcd", cursor: [2]int{4, 0}},
	{name: "overwrite-wide-second-half", cols: 10, rows: 2, in: "中\x1b[2GX", screen: " X", cursor: [2]int{2, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			wantCell(t, d, 0, 0, DumpCell{Ch: " ", W: 1})
		}},
	{name: "overwrite-wide-first-half", cols: 10, rows: 2, in: "中\rX", screen: "X", cursor: [2]int{1, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			wantCell(t, d, 1, 0, DumpCell{Ch: " ", W: 1})
		}},
	{name: "combining", cols: 10, rows: 2, in: "e\u0301x", screen: "e\u0301x", cursor: [2]int{2, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			wantCell(t, d, 0, 0, DumpCell{Ch: "e\u0301", W: 1})
		}},
	{name: "combining-after-wide", cols: 10, rows: 2, in: "中\u0301", screen: "中\u0301", cursor: [2]int{2, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			wantCell(t, d, 0, 0, DumpCell{Ch: "中\u0301", W: 2})
		}},
	{name: "emoji-variation", cols: 10, rows: 2, in: "❤\ufe0f!", screen: "❤\ufe0f!", cursor: [2]int{2, 0}},
	{name: "zero-width-after-control", cols: 10, rows: 2, in: "a\r\u0301", screen: "", cursor: [2]int{1, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			// Not joined (a control came between): a cell of its own,
			// of width 0, that the cursor steps over.
			wantCell(t, d, 0, 0, DumpCell{Ch: "\u0301", W: 0})
		}},
	{name: "emoji-wide", cols: 10, rows: 2, in: "😀x", screen: "😀x", cursor: [2]int{3, 0}},

	// UTF-8 decoding.
	{name: "utf8-split", cols: 10, rows: 2, in: "a\xe4", steps: []step{{in: "\xb8"}, {in: "\xad"}, {in: "b"}}, screen: "a中b", cursor: [2]int{4, 0}},
	{name: "utf8-invalid-dropped", cols: 10, rows: 2, in: "a\xffb\xc3(c\xe2\x82d\xef\xbb\xbfe", screen: "ab(cde", cursor: [2]int{6, 0}},
	{name: "c1-csi", cols: 10, rows: 2, in: "ab\u009b2Dc", screen: "cb", cursor: [2]int{1, 0}},

	// Cursor movement.
	{name: "cup", cols: 10, rows: 5, in: "\x1b[3;4HX\x1b[HY\x1b[;5HZ", screen: "Y   Z\n\n   X", cursor: [2]int{5, 0}},
	{name: "cup-clamps", cols: 10, rows: 5, in: "\x1b[99;99HX", screen: "\n\n\n\n         X", cursor: [2]int{9, 4}},
	{name: "relative-moves", cols: 10, rows: 5, in: "\x1b[3;3H\x1b[AA\x1b[2BB\x1b[3CC\x1b[5DD", screen: "\n  A\n\n   D   C", cursor: [2]int{4, 3}},
	{name: "cnl-cpl", cols: 10, rows: 5, in: "ab\x1b[2EX\x1b[FY", screen: "ab\nY\nX", cursor: [2]int{1, 1}},
	{name: "cha-hpa-vpa", cols: 10, rows: 5, in: "\x1b[5GA\x1b[2`B\x1b[3dC\x1b[2aD\x1b[eE", screen: " B  A\n\n  C  D\n      E", cursor: [2]int{7, 3}},
	{name: "save-restore", cols: 10, rows: 3, in: "ab\x1b7\x1b[31m\x1b[3;5Hx\x1b8c", screen: "abc\n\n    x", cursor: [2]int{3, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			wantCell(t, d, 2, 0, DumpCell{Ch: "c", W: 1})
			wantCell(t, d, 4, 2, DumpCell{Ch: "x", W: 1, Fg: "p1"})
		}},
	{name: "scosc", cols: 10, rows: 3, in: "ab\x1b[s\x1b[3;5H\x1b[uc", screen: "abc", cursor: [2]int{3, 0}},

	// Erasing.
	{name: "ed0", cols: 5, rows: 3, in: "aaaaa\r\nbbbbb\r\nccccc\x1b[2;3H\x1b[J", screen: "aaaaa\nbb", cursor: [2]int{2, 1}},
	{name: "ed1", cols: 5, rows: 3, in: "aaaaa\r\nbbbbb\r\nccccc\x1b[2;3H\x1b[1J", screen: "\n   bb\nccccc", cursor: [2]int{2, 1}},
	{name: "ed2", cols: 5, rows: 3, in: "aaaaa\r\nbbbbb\x1b[2J", screen: "", cursor: [2]int{4, 1}},
	{name: "ed3", cols: 5, rows: 2, in: "1\r\n2\r\n3\r\n4\x1b[3J", screen: "3\n4", cursor: [2]int{1, 1},
		check: func(t *testing.T, s *Screen, d Dump) {
			if len(d.Scrollback) != 0 {
				t.Errorf("scrollback has %d lines", len(d.Scrollback))
			}
		}},
	{name: "el", cols: 6, rows: 3, in: "abcdef\r\nabcdef\r\nabcdef\x1b[1;3H\x1b[K\x1b[2;3H\x1b[1K\x1b[3;3H\x1b[2K", screen: "ab\n   def", cursor: [2]int{2, 2}},
	{name: "erase-keeps-background", cols: 3, rows: 1, in: "abc\r\x1b[41m\x1b[2K", screen: "", cursor: [2]int{0, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			wantCell(t, d, 2, 0, DumpCell{Ch: " ", W: 1, Bg: "p1"})
		}},
	{name: "ech", cols: 10, rows: 2, in: "abcdefgh\x1b[3G\x1b[3X", screen: "ab   fgh", cursor: [2]int{2, 0}},
	{name: "ich", cols: 8, rows: 2, in: "abcdefgh\x1b[3G\x1b[2@", screen: "ab  cdef", cursor: [2]int{2, 0}},
	{name: "dch", cols: 8, rows: 2, in: "abcdefgh\x1b[3G\x1b[2P", screen: "abefgh", cursor: [2]int{2, 0}},
	{name: "il-dl", cols: 5, rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[2H\x1b[L\x1b[4H\x1b[M", screen: "1\n\n2", cursor: [2]int{0, 3}},
	{name: "insert-mode", cols: 8, rows: 2, in: "abcdef\r\x1b[4hXY\x1b[4lZ", screen: "XYZbcdef", cursor: [2]int{3, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			if d.Modes.Insert {
				t.Error("insert mode on")
			}
		}},
	{name: "insert-mode-wide", cols: 6, rows: 2, in: "abcd\r\x1b[4h中", screen: "中abcd", cursor: [2]int{2, 0}},

	// Scroll regions and scrolling.
	{name: "region-lf", cols: 5, rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[2;3r\x1b[3H\n\nX", screen: "1\n\nX\n4", cursor: [2]int{1, 2},
		check: func(t *testing.T, s *Screen, d Dump) {
			if len(d.Scrollback) != 0 {
				t.Error("a region not at the top scrolled into the scrollback")
			}
		}},
	{name: "region-top-scrolls-into-scrollback", cols: 5, rows: 3, in: "1\r\n2\r\n3\x1b[1;2r\x1b[2H\nX", scrollback: "1", screen: "2\nX\n3", cursor: [2]int{1, 1}},
	{name: "ri", cols: 5, rows: 3, in: "1\r\n2\r\n3\x1b[H\x1bMX", screen: "X\n1\n2", cursor: [2]int{1, 0}},
	{name: "ind-nel", cols: 5, rows: 3, in: "ab\x1bDc\x1bEd", screen: "ab\n  c\nd", cursor: [2]int{1, 2}},
	{name: "su-sd", cols: 5, rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[2S", screen: "3\n4", cursor: [2]int{1, 3},
		check: func(t *testing.T, s *Screen, d Dump) {
			if len(d.Scrollback) != 0 {
				t.Error("SU filled the scrollback")
			}
		}},
	{name: "sd", cols: 5, rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[T", screen: "\n1\n2\n3", cursor: [2]int{1, 3}},
	{name: "origin-mode", cols: 10, rows: 5, in: "\x1b[2;4r\x1b[?6h\x1b[HA\x1b[9;1HB", screen: "\nA\n\nB", cursor: [2]int{1, 3},
		check: func(t *testing.T, s *Screen, d Dump) {
			if !d.Modes.Origin {
				t.Error("origin mode off")
			}
		}},

	// Tab stops.
	{name: "hts-tbc", cols: 20, rows: 2, in: "\x1b[3g\x1b[4G\x1bH\x1b[11G\x1bH\r\tA\tB\x1b[11G\x1b[0g\r\t\tC", screen: "   A      B        C", cursor: [2]int{19, 0}},
	{name: "cht-cbt", cols: 30, rows: 2, in: "\x1b[2IA\x1b[2ZB", screen: "        B       A", cursor: [2]int{9, 0}},

	// SGR.
	{name: "sgr", cols: 10, rows: 2,
		in:     "\x1b[1;31;48;5;200mX\x1b[0;38;2;1;2;3;4;7mY\x1b[0m\r\n\x1b[1;2;3;4;5;7;8;9;53;91;107mZ\x1b[m",
		screen: "XY\nZ", cursor: [2]int{1, 1},
		check: func(t *testing.T, s *Screen, d Dump) {
			wantCell(t, d, 0, 0, DumpCell{Ch: "X", W: 1, Fg: "p1", Bg: "p200", F: "b"})
			wantCell(t, d, 1, 0, DumpCell{Ch: "Y", W: 1, Fg: "#010203", F: "ur"})
			wantCell(t, d, 0, 1, DumpCell{Ch: "Z", W: 1, Fg: "p9", Bg: "p15", F: "bdiukrhso"})
		}},
	{name: "sgr-colon", cols: 10, rows: 2, in: "\x1b[38:2::10:20:30;48:5:100;4:3mA\x1b[24;22;39;49mB\x1b[38:5:7;4:0mC",
		screen: "ABC", cursor: [2]int{3, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			wantCell(t, d, 0, 0, DumpCell{Ch: "A", W: 1, Fg: "#0a141e", Bg: "p100", F: "u"})
			wantCell(t, d, 1, 0, DumpCell{Ch: "B", W: 1})
			wantCell(t, d, 2, 0, DumpCell{Ch: "C", W: 1, Fg: "p7"})
		}},
	{name: "sgr-resets", cols: 10, rows: 2, in: "\x1b[1;2;3;4;5;7;8;9;53m\x1b[22;23;24;25;27;28;29;55mA", screen: "A", cursor: [2]int{1, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			wantCell(t, d, 0, 0, DumpCell{Ch: "A", W: 1})
		}},

	// Character sets.
	{name: "dec-graphics", cols: 10, rows: 2, in: "\x1b(0lqk\x1b(Bq\x0e\x1b)0x\x0fx", screen: "┌─┐q│x", cursor: [2]int{6, 0}},

	// Alternate screens.
	{name: "alt-1049", cols: 10, rows: 3, in: "main\x1b[?1049halt\x1b[?1049l", screen: "main", cursor: [2]int{4, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			if d.Alt {
				t.Error("alt still shown")
			}
		}},
	{name: "alt-shown", cols: 10, rows: 3, in: "1\r\n2\r\n3\r\n4\x1b[?1049h\x1b[Halt", scrollback: "1", screen: "alt", cursor: [2]int{3, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			if !d.Alt || !s.AltScreen() {
				t.Error("alt not shown")
			}
		}},
	{name: "alt-47-keeps-cursor", cols: 10, rows: 3, in: "ab\x1b[?47h\x1b[2;5Hx\x1b[?47lc", screen: "ab\n     c", cursor: [2]int{6, 1}},

	// Modes, title, working directory.
	{name: "modes", cols: 10, rows: 2, in: "\x1b[?1h\x1b[?2004h\x1b[?1004h\x1b[?1003h\x1b[?1006h\x1b[?25l\x1b[4h", screen: "", cursor: [2]int{0, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			want := DumpModes{ApplicationCursorKeys: true, Wraparound: true, Insert: true, BracketedPaste: true, SendFocus: true, MouseTracking: "any"}
			if d.Modes != want {
				t.Errorf("modes = %+v, want %+v", d.Modes, want)
			}
			if d.Cursor.Visible {
				t.Error("cursor visible")
			}
		}},
	{name: "title", cols: 10, rows: 2, in: "\x1b]0;one\x07\x1b]2;two\x1b\\\x1b]1;icon\x07", screen: "", cursor: [2]int{0, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			if d.Title != "two" || s.Title() != "two" {
				t.Errorf("title %q", d.Title)
			}
		}},
	{name: "title-split", cols: 10, rows: 2, in: "\x1b]2;ti", steps: []step{{in: "tle\x1b"}, {in: "\\x"}}, screen: "x", cursor: [2]int{1, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			if d.Title != "title" {
				t.Errorf("title %q", d.Title)
			}
		}},
	{name: "cwd", cols: 10, rows: 2, in: "\x1b]7;file://host/home/me/a%20b\x07", screen: "", cursor: [2]int{0, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			if s.Cwd() != "/home/me/a b" {
				t.Errorf("cwd %q", s.Cwd())
			}
		}},
	{name: "hyperlink", cols: 20, rows: 2, in: "a\x1b]8;id=1;https://x.test/\x1b\\link\x1b]8;;\x1b\\b", screen: "alinkb", cursor: [2]int{6, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			// xterm.js draws links with an underline, and says so.
			wantCell(t, d, 1, 0, DumpCell{Ch: "l", W: 1, F: "u"})
			wantCell(t, d, 5, 0, DumpCell{Ch: "b", W: 1})
		}},
	{name: "shell-marks", cols: 10, rows: 2, in: "\x1b]133;A\x07$ \x1b]133;B\x07ls\r\n\x1b]133;C\x07", screen: "$ ls", cursor: [2]int{0, 1},
		check: func(t *testing.T, s *Screen, d Dump) {
			if s.normal.lines[0].marks != markPrompt|markCommand || s.normal.lines[1].marks != markOutput {
				t.Errorf("marks %b %b", s.normal.lines[0].marks, s.normal.lines[1].marks)
			}
		}},
	{name: "decscusr", cols: 10, rows: 2, in: "\x1b[4 q", screen: "", cursor: [2]int{0, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			if s.modes.cursorStyle != 3 || s.modes.cursorBlink != 2 {
				t.Errorf("cursor style %d blink %d", s.modes.cursorStyle, s.modes.cursorBlink)
			}
		}},

	// Resets.
	{name: "ris", cols: 10, rows: 2, in: "1\r\n2\r\n3\x1b[31m\x1b[?1h\x1b[4h\x1b]2;t\x07\x1bcX", screen: "X", cursor: [2]int{1, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			if len(d.Scrollback) != 0 || d.Modes.ApplicationCursorKeys || d.Modes.Insert || d.Title != "t" {
				t.Errorf("after RIS: %+v", d)
			}
			wantCell(t, d, 0, 0, DumpCell{Ch: "X", W: 1})
		}},
	{name: "decstr", cols: 10, rows: 3, in: "\x1b[2;3r\x1b[?6h\x1b[31m\x1b[4h\x1b[?25l\x1b[!pX", screen: "\nX", cursor: [2]int{1, 1},
		check: func(t *testing.T, s *Screen, d Dump) {
			if d.Modes.Origin || d.Modes.Insert || !d.Cursor.Visible || s.cur.bottom != 2 {
				t.Errorf("after DECSTR: %+v", d)
			}
			wantCell(t, d, 0, 1, DumpCell{Ch: "X", W: 1})
		}},
	{name: "decaln", cols: 3, rows: 2, in: "\x1b#8", screen: "EEE\nEEE", cursor: [2]int{0, 0}},
	{name: "rep", cols: 10, rows: 2, in: "ab\x1b[3b", screen: "abbbb", cursor: [2]int{5, 0}},

	// Escape sequences cut between writes, and oddities xterm.js has.
	{name: "csi-split", cols: 10, rows: 2, in: "a\x1b", steps: []step{{in: "["}, {in: "3"}, {in: "1mb"}}, screen: "ab", cursor: [2]int{2, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			wantCell(t, d, 1, 0, DumpCell{Ch: "b", W: 1, Fg: "p1"})
		}},
	{name: "csi-ignore", cols: 10, rows: 2, in: "a\x1b[1?2hb\x1b[!1xc", screen: "abc", cursor: [2]int{3, 0}},
	{name: "control-inside-csi", cols: 10, rows: 2, in: "ab\x1b[\r2Cc", screen: "abc", cursor: [2]int{3, 0}},
	{name: "apc-ignored", cols: 10, rows: 2, in: "a\x1b_hidden\x1b\\b", screen: "ab", cursor: [2]int{2, 0}},
	{name: "dcs-ignored", cols: 10, rows: 2, in: "a\x1bP1$qm\x1b\\b", screen: "ab", cursor: [2]int{2, 0}},
	{name: "cha-in-origin-mode", cols: 10, rows: 5, in: "\x1b[2;4r\x1b[?6h\x1b[2;1H\x1b[5GX", screen: "\n\n\n    X", cursor: [2]int{5, 3}},

	// Resize and reflow.
	{name: "resize-grow", cols: 10, rows: 3, in: "hello\r\nworld", steps: []step{{cols: 20, rows: 4}}, screen: "hello\nworld", cursor: [2]int{5, 1}},
	{name: "reflow-narrower", cols: 10, rows: 3, in: "abcdefghij\r\n", steps: []step{{cols: 5, rows: 3}}, screen: "abcde\n~fghij", cursor: [2]int{0, 2}},
	{name: "reflow-wider", cols: 5, rows: 3, in: "abcdefgh\r\n", steps: []step{{cols: 10, rows: 3}}, screen: "abcdefgh", cursor: [2]int{0, 1}},
	{name: "reflow-keeps-cursor-line", cols: 10, rows: 3, in: "abcdefghij", steps: []step{{cols: 5, rows: 3}}, screen: "abcde", cursor: [2]int{4, 0}},
	{name: "shrink-rows-keeps-cursor", cols: 10, rows: 4, in: "1\r\n2\r\n3\r\n4", steps: []step{{cols: 10, rows: 2}}, scrollback: "1\n2", screen: "3\n4", cursor: [2]int{1, 1}},
	{name: "grow-rows-pulls-scrollback", cols: 10, rows: 2, in: "1\r\n2\r\n3\r\n4", steps: []step{{cols: 10, rows: 4}}, screen: "1\n2\n3\n4", cursor: [2]int{1, 3}},
	{name: "grow-rows-cursor-above-bottom", cols: 10, rows: 3, in: "1\r\n2\r\n3\r\n4\x1b[H", steps: []step{{cols: 10, rows: 4}}, scrollback: "1", screen: "2\n3\n4", cursor: [2]int{0, 0}},
	{name: "one-column", cols: 1, rows: 2, in: "abc", screen: "ab\n~c", cursor: [2]int{1, 1}},

	// Corners found by comparing random streams with xterm.js.
	{name: "rep-many", cols: 6, rows: 2, in: "\x1b[?47h中\x1b[1049b", screen: "~中中中\n~中中中", cursor: [2]int{5, 1}},
	{name: "reflow-reads-popped-lines", cols: 13, rows: 9, in: "\x1b#8\x1b[2;5H", steps: []step{{cols: 5, rows: 6}},
		scrollback: "EEEEE\n~EEEEE\n~EEE\nEEEEE\n~EEEEE\n~EEE\n~EEEEE\n~EEE", screen: "~EEEEE\n~EEE\n~EEEEE\n~EEE\n~EEEEE\n~EEE", cursor: [2]int{4, 5}},
	{name: "wrap-recycles-only-row", cols: 11, rows: 1, in: "\x1b[?1049h\x1b[31;44m\t\t\t😀", screen: "~😀", cursor: [2]int{2, 0},
		check: func(t *testing.T, s *Screen, d Dump) {
			wantCell(t, d, 10, 0, DumpCell{Ch: " ", W: 1, Fg: "p1", Bg: "p4"})
		}},
	{name: "alt-hidden-lines", cols: 10, rows: 3, steps: []step{{cols: 10, rows: 6}, {cols: 10, rows: 3},
		{in: "\x1b[?1049h1\r\n2\r\n3\r\n4\r\n5"}, {cols: 10, rows: 5}}, screen: "1\n2\n3\n4\n5", cursor: [2]int{1, 4}},
}

func TestGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			s := g.run(t)
			checkInvariants(t, s)
			d := s.Dump(-1)
			if got := render(d.Screen); got != g.screen {
				t.Errorf("screen:\n%s\nwant:\n%s", got, g.screen)
			}
			if got := render(d.Scrollback); got != g.scrollback {
				t.Errorf("scrollback:\n%s\nwant:\n%s", got, g.scrollback)
			}
			if got := [2]int{d.Cursor.X, d.Cursor.Y}; got != g.cursor {
				t.Errorf("cursor %v, want %v", got, g.cursor)
			}
			if g.check != nil {
				g.check(t, s, d)
			}
		})
	}
}

func TestText(t *testing.T) {
	s := New(10, 3, Options{})
	s.Write([]byte("one\r\ntwo\r\n\x1b[1;31mthree\x1b[m  \r\n中x\x1b[44m  \x1b[m"))
	if got, want := s.Text(0), "two\nthree\n中x\n"; got != want {
		t.Errorf("Text(0) = %q, want %q", got, want)
	}
	if got, want := s.Text(5), "one\ntwo\nthree\n中x\n"; got != want {
		t.Errorf("Text(5) = %q, want %q", got, want)
	}
	if got, want := s.ANSI(0), "two\n\x1b[0;1;31mthree\x1b[0m\n中x\x1b[0;44m  \x1b[0m\n"; got != want {
		t.Errorf("ANSI(0) = %q, want %q", got, want)
	}
}

func TestSize(t *testing.T) {
	s := New(0, 0, Options{})
	if c, r := s.Size(); c != 2 || r != 1 {
		t.Errorf("New(0, 0) is %dx%d", c, r)
	}
	s.Resize(5000, 5000)
	if c, r := s.Size(); c != maxDim || r != maxDim {
		t.Errorf("Resize(5000, 5000) gives %dx%d", c, r)
	}
	s.Resize(80, 24)
	if c, r := s.Size(); c != 80 || r != 24 {
		t.Errorf("Resize(80, 24) gives %dx%d", c, r)
	}
	if x, y := s.CursorPosition(); x != 0 || y != 0 {
		t.Errorf("cursor %d,%d", x, y)
	}
}

// checkInvariants checks what must hold after any input.
func checkInvariants(t testing.TB, s *Screen) {
	t.Helper()
	for _, b := range []*buffer{s.normal, s.alt} {
		if b == s.alt && len(b.lines) == 0 {
			continue
		}
		if len(b.lines) != s.rows {
			t.Fatalf("buffer has %d rows, screen %d", len(b.lines), s.rows)
		}
		for y, l := range b.lines {
			if len(l.cells) < s.cols || (b == s.normal && len(l.cells) != s.cols) {
				t.Fatalf("row %d has %d cells for %d columns", y, len(l.cells), s.cols)
			}
			for x, c := range l.cells {
				if c.width() > 2 || int(c.s) >= max(len(s.styles.list), 1) {
					t.Fatalf("cell %d,%d: %#x style %d", x, y, c.c, c.s)
				}
				if c.c&combFlag != 0 && int(c.c&cpMask) >= len(s.combined) {
					t.Fatalf("cell %d,%d: string %d of %d", x, y, c.c&cpMask, len(s.combined))
				}
			}
		}
		if b.top < 0 || b.bottom >= s.rows || b.top > b.bottom {
			t.Fatalf("scroll region %d..%d", b.top, b.bottom)
		}
	}
	b := s.cur
	if b.x < 0 || b.x > s.cols+1 || b.y < 0 || b.y >= s.rows {
		t.Fatalf("cursor %d,%d on %dx%d", b.x, b.y, s.cols, s.rows)
	}
	if s.sb.maxLines > 0 && s.sb.len() > s.sb.maxLines || s.sb.bytes > s.sb.maxBytes {
		t.Fatalf("scrollback %d lines, %d bytes; limits %d, %d", s.sb.len(), s.sb.bytes, s.sb.maxLines, s.sb.maxBytes)
	}
	if n := s.sb.len(); n > 0 {
		if total := s.sb.bytes; total <= 0 {
			t.Fatalf("scrollback of %d lines counts %d bytes", n, total)
		}
	}
	d := s.Dump(-1)
	if len(d.Screen) != s.rows {
		t.Fatalf("dump has %d rows", len(d.Screen))
	}
	for _, l := range append(d.Screen, d.Scrollback...) {
		if len(l.Cells) > s.cols {
			t.Fatalf("dump row of %d cells", len(l.Cells))
		}
	}
}
