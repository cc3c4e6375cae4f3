package mcp

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		raw      bool
		final    bool
		used     int // -1: all of in
	}{
		{in: "hello\r\nworld\r\n", want: "hello\nworld\n", final: true, used: -1},
		{in: "\x1b[1;31mred\x1b[0m plain", want: "red plain", final: true, used: -1},
		{in: "\x1b]0;title\x07text\x1b]7;file:///tmp\x1b\\ok", want: "textok", final: true, used: -1},
		{in: "\x1bP+q\x1b\\dcs\x1b(Bcharset\x1b=keypad\x1b7save", want: "dcscharsetkeypadsave", final: true, used: -1},
		{in: "tab\there\x07bell\x00nul", want: "tab\therebellnul", final: true, used: -1},
		{in: "abc\bd", want: "abd", final: true, used: -1},
		{in: "\r\n\b", want: "\n", final: true, used: -1},
		{in: "10%\r20%\r30%", want: "10%\n20%\n30%", final: true, used: -1},
		{in: "line\n\r   \rnext", want: "line\n   \nnext", final: true, used: -1},
		{in: "bad \xff\xfe ok \xc3", want: "bad \ufffd\ufffd ok \ufffd", final: true, used: -1},
		{in: "\u009bC1 dropped é", want: "C1 dropped é", final: true, used: -1},
		// More may follow: a cut at the end waits.
		{in: "abc\x1b[3", want: "abc", used: 3},
		{in: "abc\x1b", want: "abc", used: 3},
		{in: "abc\x1b]0;ti", want: "abc", used: 3},
		{in: "abc\x1b]0;ti\x1b", want: "abc", used: 3},
		{in: "caf\xc3", want: "caf", used: 3},
		{in: "line\r", want: "line", used: 4},
		{in: "line\r", want: "line\r", raw: true, used: -1},
		// Raw keeps the sequences and controls, and still mends UTF-8.
		{in: "\x1b[1mB\x1b[0m\r\n\x07\xff", want: "\x1b[1mB\x1b[0m\r\n\x07\ufffd", raw: true, final: true, used: -1},
		{in: "x\x1b[1", want: "x", raw: true, used: 1},
	} {
		c := cleaner{raw: tc.raw}
		got, used := c.clean(nil, []byte(tc.in), tc.final)
		want := tc.used
		if want < 0 {
			want = len(tc.in)
		}
		if string(got) != tc.want || used != want {
			t.Errorf("clean(%q, raw=%v, final=%v) = %q, %d; want %q, %d", tc.in, tc.raw, tc.final, got, used, tc.want, want)
		}
	}
}

// progress is 300 updates of a progress bar, as curl or pip draw one.
func progress() string {
	var b strings.Builder
	b.WriteString("downloading\r\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, "\r%3d%% [%s]", i/3, strings.Repeat("#", i/30))
	}
	b.WriteString("\r\ndone\r\n")
	return b.String()
}

// A collapsing cleaner shows what the screen shows: each "\r" goes back to
// the line's start and what follows overwrites it.
func TestCleanCollapse(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		used     int // -1: all of in
		final    bool
	}{
		{in: progress(), want: "downloading\n100% [##########]\ndone\n", final: true, used: -1},
		{in: "10%\r20%\r30%", want: "30%", final: true, used: -1},
		{in: "abcdef\rXY", want: "XYcdef", final: true, used: -1},
		{in: "abcdef\r\x1b[KXY", want: "XY", final: true, used: -1},
		{in: "abcdef\r\x1b[0KXY", want: "XY", final: true, used: -1},
		{in: "abcdef\r\x1b[2KXY", want: "XYcdef", final: true, used: -1}, // erases the whole line, cursor stays: not ours to model
		{in: "one\ntwo\rT", want: "one\nTwo", final: true, used: -1},
		{in: "long line\rab\ncd", want: "abng line\ncd", final: true, used: -1},
		{in: "héllo\rxyz", want: "xyzlo", final: true, used: -1},
		{in: "abc\rxyzw", want: "xyzw", final: true, used: -1},
		{in: "abc\b\bX", want: "aXc", final: true, used: -1},
		{in: "\b\r\r\b\x1b[K", want: "", final: true, used: -1},
		{in: "\n\rX", want: "\nX", final: true, used: -1},
		{in: "ab\r\n", want: "ab\n", final: true, used: -1},
		// A "\r" at the end waits: it may be a "\r\n".
		{in: "50%\r", want: "50%", used: 3},
	} {
		c := cleaner{collapse: true}
		got, used := c.clean(nil, []byte(tc.in), tc.final)
		want := tc.used
		if want < 0 {
			want = len(tc.in)
		}
		if string(got) != tc.want || used != want {
			t.Errorf("clean(%q, collapse, final=%v) = %q, %d; want %q, %d", tc.in, tc.final, got, used, tc.want, want)
		}
	}
}

// FuzzClean checks the cleaner's promises on any input: the text is valid
// UTF-8, final consumes everything, and reading in two parts (the first
// not final, the rest carried over) gives the text reading at once gives:
// cutting never tears or duplicates anything.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "hello\r\n", "\x1b[1;31mx\x1b[0m", "\x1b]0;t\x07y", "caf\xc3\xa9\r\n\x1b", "a\bb\r\rc\xff", "\x1bP1$r\x1b\\z"} {
		f.Add([]byte(s), uint(len(s)/2), false)
	}
	f.Add([]byte(progress()), uint(100), false)
	f.Fuzz(func(t *testing.T, p []byte, cut uint, raw bool) {
		for _, collapse := range []bool{false, true} {
			fuzzClean(t, p, cut, raw, collapse)
		}
	})
}

func fuzzClean(t *testing.T, p []byte, cut uint, raw, collapse bool) {
	{
		var offs []uint64
		c := cleaner{raw: raw, collapse: collapse, src: &offs}
		whole, used := c.clean(nil, p, true)
		if used != len(p) {
			t.Fatalf("final clean consumed %d of %d", used, len(p))
		}
		if len(offs) != len(whole) {
			t.Fatalf("%d offsets for %d bytes of text", len(offs), len(whole))
		}
		offs = nil
		c = cleaner{raw: raw, collapse: collapse, src: &offs}
		if !utf8.Valid(whole) {
			t.Fatalf("invalid UTF-8 out of %q: %q", p, whole)
		}
		k := int(cut % uint(len(p)+1))
		first, n := c.clean(nil, p[:k], false)
		if n > k {
			t.Fatalf("consumed %d of %d", n, k)
		}
		c.base = uint64(n)
		both, m := c.clean(first, p[n:], true)
		if n+m != len(p) || !bytes.Equal(both, whole) {
			t.Fatalf("in two parts at %d (first consumed %d): %q; at once: %q", k, n, both, whole)
		}
		if len(offs) != len(both) {
			t.Fatalf("in two parts: %d offsets for %d bytes of text", len(offs), len(both))
		}
		for i := range offs {
			if offs[i] >= uint64(len(p)) || i > 0 && offs[i] < offs[i-1] && !collapse {
				t.Fatalf("offsets out of order or range: %v", offs)
			}
		}
	}
}
