package runcmd

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		max    int
		writes []string
		want   string
		cut    bool
	}{
		{"fits", 10, []string{"ab", "cd\n"}, "ab" + "cd\n", false},
		{"exactly full", 4, []string{"abcd"}, "abcd", false},
		{"the tail from a line start", 8, []string{"one\ntwo\nthree\n"}, "three\n", true},
		{"a line longer than the bound keeps its end", 4, []string{"abcdefgh"}, "efgh", true},
		{"many small writes", 6, strings.Split(strings.Repeat("xy\n", 100), ""), "xy\nxy\n", true},
		{"a character is never split", 5, []string{"aaaa\u00e9\u00e9\u00e9"}, "\u00e9\u00e9", true},
		{"empty", 3, nil, "", false},
		{"zero bound", 0, []string{"abc"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := &Tail{Max: tc.max}
			for _, w := range tc.writes {
				if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			got, cut := tl.Text()
			if got != tc.want || cut != tc.cut {
				t.Errorf("Text = %q, %v; want %q, %v", got, cut, tc.want, tc.cut)
			}
			if !utf8.ValidString(got) {
				t.Errorf("invalid UTF-8: %q", got)
			}
		})
	}
}

// TestTailFlood: 10 MB through a 64 KiB tail keeps the last lines whole
// and costs no more memory than a few bounds.
func TestTailFlood(t *testing.T) {
	tl := &Tail{Max: 64 << 10}
	line := []byte(strings.Repeat("A", 99) + "\n")
	for i := 0; i < 100_000; i++ {
		tl.Write(line)
	}
	tl.Write([]byte("flood-done\n"))
	got, cut := tl.Text()
	if !cut || !strings.HasSuffix(got, "AAAA\nflood-done\n") || len(got) > 64<<10 || !strings.HasPrefix(got, "AAAA") {
		t.Fatalf("cut %v, %d bytes, ends %q", cut, len(got), got[len(got)-20:])
	}
	if cap(tl.buf) > 3*(64<<10) {
		t.Fatalf("the tail holds %d bytes", cap(tl.buf))
	}
}
