package termq

import (
	"bytes"
	"testing"
	"time"
)

func TestQueryScanner(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []Kind
	}{
		{"da1", "abc\x1b[cdef", []Kind{DA1}},
		{"da1 zero", "\x1b[0c", []Kind{DA1}},
		{"da2", "\x1b[>c\x1b[>0c", []Kind{DA2, DA2}},
		{"cpr and status", "\x1b[6n\x1b[5n", []Kind{Cursor, Status}},
		{"colors", "\x1b]10;?\x07\x1b]11;?\x1b\\\x1b]12;?\x07", []Kind{Foreground, Background, CursorColor}},
		{"not queries", "\x1b[31m\x1b[2J\x1b[1;1H\x1b[?25l\x1b]0;title\x07\x1b[66n\x1b[1c", nil},
	}
	for _, c := range cases {
		// Every split point must give the same questions.
		for cut := 0; cut <= len(c.in); cut++ {
			var s Scanner
			var got []Kind
			var ends []uint64
			fn := func(k Kind, end uint64) { got = append(got, k); ends = append(ends, end) }
			s.Scan([]byte(c.in[:cut]), 0, fn)
			s.Scan([]byte(c.in[cut:]), uint64(cut), fn)
			if len(got) != len(c.want) {
				t.Fatalf("%s cut at %d: got %v, want %v", c.name, cut, got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("%s cut at %d: got %v, want %v", c.name, cut, got, c.want)
				}
				if ends[i] == 0 || ends[i] > uint64(len(c.in)) || c.in[ends[i]-1] == 0x1b {
					t.Fatalf("%s cut at %d: bad end %d", c.name, cut, ends[i])
				}
			}
		}
	}
}

func TestFilterAnswers(t *testing.T) {
	now := time.Now()
	var a Arbiter
	a.Attach(1, true)
	a.Live(1, 0)
	accept := func(k Kind) bool { return a.FromViewer(1, k, now) }

	// No question asked: answers are dropped, keys and text pass.
	in := "ls\x1b[?1;2c\x1b[>0;276;0c\x1b[12;40R\x1b[0n\x1b]11;rgb:0000/0000/0000\x1b\\ -l\r"
	if got := Filter([]byte(in), accept); string(got) != "ls -l\r" {
		t.Fatalf("unasked answers passed: %q", got)
	}
	// F3 with a modifier looks like a cursor report from row 1: it passes.
	if got := Filter([]byte("\x1b[1;5R"), accept); string(got) != "\x1b[1;5R" {
		t.Fatalf("modified F3 dropped: %q", got)
	}
	// Arrow keys and other input are untouched.
	keys := "\x1b[A\x1b[B\x1bOP\x1b[3~\x1b[200~paste\x1b[201~"
	if got := Filter([]byte(keys), accept); string(got) != keys {
		t.Fatalf("keys changed: %q", got)
	}

	// One question, three viewers answering: exactly one answer passes.
	a.Asked(Cursor, 10, now)
	var passed [][]byte
	for range 3 {
		if got := Filter([]byte("\x1b[5;7R"), accept); len(got) > 0 {
			passed = append(passed, got)
		}
	}
	if len(passed) != 1 || !bytes.Equal(passed[0], []byte("\x1b[5;7R")) {
		t.Fatalf("passed %q, want one cursor report", passed)
	}
	// A stale question expires.
	a.Asked(DA1, 20, now.Add(-2*TTL))
	if a.Outstanding(DA1, now) {
		t.Fatal("a question older than its TTL is still outstanding")
	}
}

func FuzzQueryScanner(f *testing.F) {
	f.Add([]byte("\x1b[6n\x1b]10;?\x07"), 3)
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		if cut < 0 || cut > len(in) {
			cut = len(in) / 2
		}
		var s Scanner
		s.Scan(in[:cut], 0, func(Kind, uint64) {})
		s.Scan(in[cut:], uint64(cut), func(k Kind, end uint64) {
			if end > uint64(len(in)) {
				t.Fatalf("end %d past input %d", end, len(in))
			}
		})
	})
}
