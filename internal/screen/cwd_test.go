package screen

import (
	"strings"
	"testing"
)

// An OSC 7 report split across two writes at every byte position, with
// either terminator, gives the same percent-decoded directory as in one
// write; output around it is drawn as usual.
func TestOSC7SplitAtEveryByte(t *testing.T) {
	for _, tc := range []struct {
		name, seq, want string
	}{
		{"st", "\x1b]7;file://host/tmp/a%20b\x1b\\", "/tmp/a b"},
		{"bel", "\x1b]7;file://host/tmp/a%20b\a", "/tmp/a b"},
		{"utf8", "\x1b]7;file:///home/u/%C3%A9t%C3%A9%25\x1b\\", "/home/u/été%"},
		{"raw utf8", "\x1b]7;file://h/srv/ünï code\a", "/srv/ünï code"},
		{"query dropped", "\x1b]7;file://h/x%2Fy?q=1\a", "/x/y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := "ab" + tc.seq + "cd"
			for cut := 0; cut <= len(in); cut++ {
				s := New(20, 2, Options{})
				s.Write([]byte(in[:cut]))
				s.Write([]byte(in[cut:]))
				if got := s.Cwd(); got != tc.want {
					t.Fatalf("split at %d: cwd %q, want %q", cut, got, tc.want)
				}
				if got := s.Text(0); !strings.HasPrefix(got, "abcd\n") {
					t.Fatalf("split at %d: screen %q, want abcd on the first line", cut, got)
				}
			}
		})
	}
	// A malformed report (not a file URI, bad escape) leaves the last good one.
	s := New(20, 2, Options{})
	s.Write([]byte("\x1b]7;file://h/good\a\x1b]7;http://h/bad\a\x1b]7;file://h/bad%zz\a"))
	if s.Cwd() != "/good" {
		t.Fatalf("cwd %q after malformed reports, want /good", s.Cwd())
	}
}
