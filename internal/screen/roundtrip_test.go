package screen

import (
	"bytes"
	"encoding"
	"io"
	"regexp"
	"strings"
	"testing"
)

var (
	_ io.Writer                  = (*Screen)(nil)
	_ encoding.BinaryMarshaler   = (*Screen)(nil)
	_ encoding.BinaryUnmarshaler = (*Screen)(nil)
)

// queries matches what a terminal answers: device attributes and status
// (CSI c, CSI n), mode and setting requests (CSI $ p, DCS $ q), window
// reports (CSI t), color and clipboard queries (OSC 4, 10-19, 52 with ?).
var queries = regexp.MustCompile(`\x1b\[[?>=]?[0-9;]*[cnt]|\x1b\[[?]?[0-9;]*\$p|\x1bP\$q|\x1b\](4|1[0-9]|52)(;[^\x07\x1b;]*)*;\?`)

func queryIn(b []byte) string { return string(queries.Find(b)) }

// probe is written after a snapshot or a checkpoint to both screens: it
// shows state that a dump does not (join state, pending wrap, tab stops,
// scroll region, saved cursors, character sets, insert and auto-wrap
// modes, the screen under an alternate one).
const probe = "\u0301ab\tc\x1b8d\r\n\n\n\x1bMe\x1b[?1049lf\x1b8g\x1b[99;99Hh\x1b[2;1H\x1b[Li" +
	"\x1b[?1049h\x1b[Hj\x1b[?1049l\x1b[3Dk"

// extra are inputs for the round trips beyond the golden ones: states a
// snapshot must work to recreate.
var extra = []golden{
	{name: "styled-erase-everywhere", cols: 8, rows: 3,
		in: "\x1b[1;4;31;42m\x1b[2J\x1b[H中文\x1b[2G\x1b[5mX\x1b[7;45m\x1b[2;7H文\x1b[3;8H\x1b[33mY"},
	{name: "null-with-attributes-last-column", cols: 6, rows: 2,
		in: "abcd中\x1b[1;33mzz\x1b[H\x1b[4h\x1b[3mX\x1b[4l"},
	{name: "wrapped-first-line", cols: 4, rows: 2, in: "abcdefghijkl\x1b[?1049habcdefgh"},
	{name: "pending-wrap-saved", cols: 4, rows: 3, in: "abcd\x1b7\r\nx\x1b[31m"},
	{name: "charsets-saved", cols: 10, rows: 3, in: "\x1b(0\x1b7\x1b(B\x1b)0\x1b*A\x1b+K\x0eq"},
	{name: "tabs-region-origin", cols: 30, rows: 6, in: "\x1b[3g\x1b[5G\x1bH\x1b[13G\x1bH\x1b[2;5r\x1b[?6h\x1b[3;2Hx\x1b[?7l\x1b[4h"},
	{name: "link-and-protect", cols: 20, rows: 3, in: "\x1b]8;;http://a/\x07ab\x1b[1\"qc\x1b[0\"q\x1b]8;id=z;http://b/\x07d\x1b]8;;\x07e"},
	{name: "mid-sequence", cols: 10, rows: 2, in: "ab\x1b[3"},
	{name: "mid-osc", cols: 10, rows: 2, in: "ab\x1b]2;tit"},
	{name: "mid-utf8", cols: 10, rows: 2, in: "ab\xe4\xb8"},
	{name: "zero-width-pending", cols: 4, rows: 2, in: "abcd\x1b[m\u0301"},
	{name: "alt-with-saved", cols: 10, rows: 3, in: "1\r\n2\r\n3\r\n4\x1b[2;3H\x1b[32m\x1b[?1049h\x1b[44m\x1b[2J\x1b[2;2Hz\x1b7\x1b[1;1Hq"},
	{name: "modes-all", cols: 10, rows: 2, in: "\x1b[?1h\x1b=\x1b[?45h\x1b[?1004h\x1b[?1002h\x1b[?1016h\x1b[?1005h\x1b[?1015h\x1b[?2004h\x1b[?12l\x1b[5 q\x1b[?25l\x1b[20h\x1b[?2026h\x1b]7;file:///tmp\x07"},
	{name: "orphan", cols: 10, rows: 2, in: "ab中cd\x1b[4G\x1b[2@"},
	{name: "long-scrollback", cols: 5, rows: 2, in: strings.Repeat("line\r\nwrapped line\r\n", 30)},
}

func allInputs() []golden { return append(append([]golden(nil), goldens...), extra...) }

func TestSnapshotRoundTrip(t *testing.T) {
	for _, g := range allInputs() {
		t.Run(g.name, func(t *testing.T) {
			s := g.run(t)
			roundTrip(t, s, []byte(probe))
		})
	}
}

// roundTrip checks that a screen made from s's snapshot (whole, and with
// a few scrollback lines) shows what s shows, and goes on to show the same
// after more output.
func roundTrip(t testing.TB, s *Screen, more []byte) {
	t.Helper()
	want := s.Dump(-1)
	snap := s.Snapshot(-1)
	if q := queryIn(snap); q != "" {
		t.Fatalf("snapshot has a query %q: %q", q, snap)
	}
	r := New(s.cols, s.rows, Options{ScrollbackLines: s.sb.maxLines, ScrollbackBytes: s.sb.maxBytes})
	r.Write(snap)
	got := r.Dump(-1)
	if d := Diff(&want, &got, 10); d != nil {
		t.Fatalf("snapshot %q\nof %d lines, %d scrollback: differs:\n  %s", snap, s.rows, len(want.Scrollback), strings.Join(d, "\n  "))
	}
	if len(got.Scrollback) < len(want.Scrollback) {
		t.Fatalf("snapshot brought %d scrollback lines of %d", len(got.Scrollback), len(want.Scrollback))
	}
	for _, n := range []int{0, 1, 3} {
		r := New(s.cols, s.rows, Options{})
		r.Write(s.Snapshot(n))
		got := r.Dump(-1)
		w := s.Dump(n)
		if d := Diff(&w, &got, 10); d != nil {
			t.Fatalf("Snapshot(%d) differs:\n  %s", n, strings.Join(d, "\n  "))
		}
		if len(got.Scrollback) < len(w.Scrollback) || len(got.Scrollback) > len(w.Scrollback)+1 {
			t.Fatalf("Snapshot(%d) brought %d scrollback lines, want %d", n, len(got.Scrollback), len(w.Scrollback))
		}
	}
	if more != nil {
		s2 := cloneScreen(t, s)
		s2.Write(more)
		r.Write(more)
		want, got := s2.Dump(-1), r.Dump(-1)
		if d := Diff(&want, &got, 10); d != nil {
			t.Fatalf("after more output, the screen from the snapshot %q differs:\n  %s", snap, strings.Join(d, "\n  "))
		}
	}
}

// cloneScreen copies a screen through its checkpoint.
func cloneScreen(t testing.TB, s *Screen) *Screen {
	t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	c := New(80, 24, Options{})
	if err := c.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary of MarshalBinary: %v", err)
	}
	return c
}

func TestCheckpointRoundTrip(t *testing.T) {
	for _, g := range allInputs() {
		t.Run(g.name, func(t *testing.T) {
			s := g.run(t)
			c := cloneScreen(t, s)
			want, got := s.Dump(-1), c.Dump(-1)
			if d := Diff(&want, &got, 10); d != nil || len(want.Scrollback) != len(got.Scrollback) {
				t.Fatalf("restored checkpoint differs:\n  %s", strings.Join(d, "\n  "))
			}
			checkInvariants(t, c)
			if s.Title() != c.Title() || s.Cwd() != c.Cwd() || s.AltScreen() != c.AltScreen() {
				t.Fatal("title, cwd or alt screen differ")
			}
			for _, more := range []string{probe, "\x1b[?1049h" + probe, "\x1b[3;9r\x1b[10S" + probe} {
				s2, c2 := cloneScreen(t, s), cloneScreen(t, c)
				s2.Write([]byte(more))
				c2.Write([]byte(more))
				want, got := s2.Dump(-1), c2.Dump(-1)
				if d := Diff(&want, &got, 10); d != nil {
					t.Fatalf("after more output, the restored screen differs:\n  %s", strings.Join(d, "\n  "))
				}
				if !bytes.Equal(s2.Snapshot(-1), c2.Snapshot(-1)) {
					t.Fatal("snapshots of the two differ")
				}
			}
			again, _ := c.MarshalBinary()
			first, _ := s.MarshalBinary()
			c3 := New(2, 1, Options{})
			if err := c3.UnmarshalBinary(again); err != nil {
				t.Fatal(err)
			}
			if len(again) != len(first) {
				t.Logf("checkpoint sizes %d and %d", len(first), len(again))
			}
		})
	}
}

func TestUnmarshalRejects(t *testing.T) {
	s := New(20, 5, Options{})
	s.Write([]byte("hello\x1b[31mworld\r\n\x1b]2;t\x07"))
	good, _ := s.MarshalBinary()
	bad := [][]byte{
		nil,
		[]byte("nope"),
		append([]byte(checkpointMagic), 99),
		good[:len(good)-1],
		append(append([]byte(nil), good...), 0),
	}
	for i, b := range bad {
		c := New(10, 3, Options{})
		c.Write([]byte("keep"))
		if err := c.UnmarshalBinary(b); err == nil {
			t.Errorf("case %d: accepted", i)
		}
		if c.Text(0) != "keep\n\n\n" {
			t.Errorf("case %d: a rejected checkpoint changed the screen", i)
		}
	}
	for i := range good {
		b := append([]byte(nil), good...)
		b[i] ^= 0xFF
		c := New(3, 3, Options{})
		_ = c.UnmarshalBinary(b) // must not panic
	}
}

func TestQueryCheck(t *testing.T) {
	for _, q := range []string{"\x1b[c", "\x1b[>c", "\x1b[6n", "\x1b[?6n", "\x1b[?1$p", "\x1bP$qm\x1b\\", "\x1b]11;?\x07", "\x1b[18t"} {
		if queryIn([]byte("x"+q)) == "" {
			t.Errorf("%q not seen as a query", q)
		}
	}
	for _, q := range []string{"\x1b[20l", "\x1b[?25h", "\x1b[2;3r", "\x1b]2;title?\x1b\\"} {
		if got := queryIn([]byte(q)); got != "" {
			t.Errorf("%q seen as a query (%q)", q, got)
		}
	}
}
