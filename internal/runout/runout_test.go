package runout

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// render runs the text filter over in, cut into pieces of n bytes.
func render(in string, cols, n int) string {
	t := TextFilter{Cols: cols}
	var out []byte
	for i := 0; i < len(in); i += n {
		out = append(out, t.Filter([]byte(in[i:min(i+n, len(in))]))...)
	}
	return string(append(out, t.Flush()...))
}

func TestTextFilter(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"lines", "a\r\nb\r\n", "a\nb\n"},
		{"colors dropped", "\x1b[31mred\x1b[m\r\n", "red\n"},
		{"a CR overwrites", "50%\r100%\r\n", "100%\n"},
		{"a long line wraps and stays one line", strings.Repeat("x", 100) + "\r\n", strings.Repeat("x", 100) + "\n"},
		{"a CR returns to the start of the row, not of the line", strings.Repeat("x", 100) + "\rab\r\n", strings.Repeat("x", 80) + "ab" + strings.Repeat("x", 18) + "\n"},
		{"a CR at the end of a full row stays on it", strings.Repeat("x", 80) + "\ry\r\n", "y" + strings.Repeat("x", 79) + "\n"},
		{"backspace", "ab\bc\r\n", "ac\n"},
		{"a tab stays a tab", "a\tb\r\n", "a\tb\n"},
		{"text over a tab", "a\tb\rxy\r\n", "xy      b\n"},
		{"a tab over text moves only", "abcdefghij\r\tX\r\n", "abcdefghXj\n"},
		{"trailing blanks stay", "a  \r\n  \r\n", "a  \n  \n"},
		{"utf-8", "é→\r\n", "é→\n"},
		{"broken utf-8", "a\xc3b\xff\r\n", "a\ufffdb\ufffd\n"},
		{"an OSC with text in it", "\x1b]0;title\x07x\r\n", "x\n"},
		{"other controls", "a\x07\x00b\r\n", "ab\n"},
		{"blank last line", "x\r\n   ", "x\n   "},
	} {
		for _, n := range []int{1, 2, 5, 1000} {
			if got := render(c.in, 80, n); got != c.want {
				t.Errorf("%s (pieces of %d): %q, want %q", c.name, n, got, c.want)
			}
		}
	}
}

// readerCase is output fed to a Reader and what it must make of it.
type readerCase struct {
	name, in string
	want     string // the text written
	code     int
	done     bool
}

// checkReader feeds each case to a new Reader in pieces of several sizes.
func checkReader(t *testing.T, newReader func() Reader, cases []readerCase) {
	t.Helper()
	for _, tc := range cases {
		for _, n := range []int{1, 3, 7, 1000} {
			r := newReader()
			var out bytes.Buffer
			code, done := 0, false
			for i := 0; i < len(tc.in) && !done; i += n {
				code, done, _ = r.Write(uint64(i), []byte(tc.in[i:min(i+n, len(tc.in))]), &out)
			}
			if out.String() != tc.want || done != tc.done || code != tc.code {
				t.Errorf("%s (pieces of %d): %q done=%v code=%d; want %q %v %d", tc.name, n, out.String(), done, code, tc.want, tc.done, tc.code)
			}
		}
	}
}

// The marked run prints the text between the C after its start and the D
// that follows, and takes the D's status; marks cut anywhere.
func TestMarked(t *testing.T) {
	const (
		a = "\x1b]133;A\x07"
		b = "\x1b]133;B\x07"
		c = "\x1b]133;C\x07"
	)
	checkReader(t, func() Reader { return NewMarked(0, 80) }, []readerCase{
		{"one command", "make\r\n" + c + "ok\r\n\x1b]133;D;2\x07" + a + "$ " + b, "ok\n", 2, true},
		{"no end yet", c + "partial\r\n", "partial\n", 0, false},
		{"a D with no status", c + "x\r\n\x1b]133;D\x07", "x\n", 1, true},
		{"a huge status", c + "\x1b]133;D;300\x07", "", 1, true},
		{"a D before any C is not the end", "\x1b]133;D;0\x07" + c + "y\r\n\x1b]133;D;4\x07", "y\n", 4, true},
		{"a mark ended by ST", c + "\x1b\\z\r\n\x1b]133;D;5\x1b\\", "z\n", 5, true},
	})
	// zsh's PROMPT_SP output (its end-of-line mark, blanks to the row's
	// end, CR, blanks, CR), printed before its precmd hooks and so before
	// the end mark, is no output; other shells' output like it is.
	d0 := "\x1b]133;D;0\x07"
	zshRaw := func() Reader { m := NewMarked(0, 80); m.PromptSP, m.Raw = true, true; return m }
	checkReader(t, func() Reader { m := NewMarked(0, 80); m.PromptSP = true; return m }, []readerCase{
		{"zsh: no line break at the end", c + "no newline at end" + zshSP("#", 80) + d0, "no newline at end", 0, true},
		{"zsh: a line break at the end", c + "alpha\r\n" + zshSP("%", 80) + d0, "alpha\n", 0, true},
		{"zsh: trailing blanks", c + "a\t  " + zshSP("#", 80) + d0, "a\t  ", 0, true},
		{"zsh: an empty PROMPT_EOL_MARK", c + "x" + strings.Repeat(" ", 79) + "\r\r" + d0, "x", 0, true},
		{"zsh: a wider mark", c + "x" + "\x1b[31m<no eol>\x1b[0m" + strings.Repeat(" ", 71) + "\r        \r" + d0, "x", 0, true},
		{"zsh: no output", c + zshSP("%", 80) + d0, "", 0, true},
		{"zsh: blanks that do not fill the row are output", c + "x   \r\r" + d0, "x   ", 0, true},
	})
	checkReader(t, func() Reader { return NewMarked(0, 80) }, []readerCase{
		{"bash: the same bytes are output", c + "end" + zshSP("#", 80) + d0, "end#" + strings.Repeat(" ", 79), 0, true},
	})
	checkReader(t, zshRaw, []readerCase{
		{"raw: bytes as printed, zsh's mark left out", c + "a\tb\r\n\x1b[0m\x1b[31mred" + zshSP("#", 80) + d0, "a\tb\r\n\x1b[0m\x1b[31mred", 0, true},
	})
	// The range ends where the output does: before zsh's mark.
	m := NewMarked(0, 80)
	m.PromptSP = true
	in := c + "abc" + zshSP("#", 80) + d0
	var out bytes.Buffer
	if _, done, _ := m.Write(0, []byte(in), &out); !done {
		t.Fatal("not done")
	}
	if s, e, _ := m.Range(); in[s:e] != "abc" {
		t.Fatalf("range [%d, %d) holds %q", s, e, in[s:e])
	}
	// A C before the offset the run started at is not its command's.
	checkReader(t, func() Reader { return NewMarked(9, 80) }, []readerCase{
		{"a C before the start", c + "old\r\n\x1b]133;D;0\x07" + a, "", 0, false},
	})
}

// The marker run ignores the echo of the typed line (the printf formats
// hold %s, not the token), prints what lies between the markers, and
// takes no marker of another token.
func TestMarkers(t *testing.T) {
	echo := "$ " + Typed("make", "T1", "$?") + "\r\n"
	checkReader(t, func() Reader { return NewMarkers("T1", 80) }, []readerCase{
		{"output with a line break", echo + "__tk_start_T1__\r\nbuilt\r\n\r\n__tk_end_T1_2__\r\n$ ", "built\n", 2, true},
		{"output without one", echo + "__tk_start_T1__\r\nbuilt\r\n__tk_end_T1_0__\r\n", "built\n", 0, true},
		{"no output", echo + "__tk_start_T1__\r\n\r\n__tk_end_T1_0__\r\n", "", 0, true},
		{"another token's marker is output", echo + "__tk_start_T1__\r\n__tk_end_T2_0__\r\n\r\n__tk_end_T1_1__\r\n", "__tk_end_T2_0__\n", 1, true},
		{"not ended", echo + "__tk_start_T1__\r\nx\r\ny\r\n", "x\n", 0, false},
		{"only the echo", echo, "", 0, false},
		{"a status too big", echo + "__tk_start_T1__\r\n\r\n__tk_end_T1_999__\r\n", "", 1, true},
	})
}

// Any output renders without a panic to valid UTF-8, the same however it
// is cut.
func FuzzTextFilter(f *testing.F) {
	f.Add([]byte("a\r\nb\x1b[31m\r50%\rdone\xc3\xa9\xff\t\b\n"), 3, 80)
	f.Add([]byte("#          \r \r"), 1, 5)
	f.Fuzz(func(t *testing.T, p []byte, cut, cols int) {
		cols = min(max(cols, 0), 500)
		cut = min(max(cut, 1), len(p)+1)
		whole := render(string(p), cols, len(p)+1)
		if split := render(string(p), cols, cut); split != whole {
			t.Fatalf("cut every %d: %q, whole %q", cut, split, whole)
		}
		if !utf8.ValidString(whole) {
			t.Fatalf("invalid UTF-8 %q", whole)
		}
	})
}

// zshSP is what zsh 5.9 prints for PROMPT_SP with PROMPT_EOL_MARK's
// default (%B%S%#%s%b) showing mark, in a terminal cols wide.
func zshSP(mark string, cols int) string {
	return "\x1b[1m\x1b[7m" + mark + "\x1b[27m\x1b[1m\x1b[0m" + strings.Repeat(" ", cols-1) + "\r \r"
}
