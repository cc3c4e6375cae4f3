package holder

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"termkeep/internal/wire"
)

// The look for an echo is skipped for a while after one that found
// nothing: on a machine whose other cores are busy, the pty's echo waits
// for the look to end, and every look then costs its whole length.
func TestSpinPolicy(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type step struct {
		at   time.Duration // since t0
		op   string        // "ask" or "found" or "missed"
		want bool          // for ask
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"looks at first", []step{{0, "ask", true}}},
		{"keeps looking while looks find the echo", []step{
			{0, "ask", true}, {0, "found", false}, {time.Millisecond, "ask", true}, {time.Millisecond, "found", false}, {2 * time.Millisecond, "ask", true},
		}},
		{"a look that found nothing stops them for a while", []step{
			{0, "ask", true}, {0, "missed", false},
			{time.Millisecond, "ask", false},
			{spinBackoff - 1, "ask", false},
			{spinBackoff, "ask", true},
		}},
		{"another miss after the pause pauses again", []step{
			{0, "missed", false}, {spinBackoff, "ask", true}, {spinBackoff, "missed", false},
			{spinBackoff + time.Millisecond, "ask", false}, {2 * spinBackoff, "ask", true},
		}},
		{"a find after a pause keeps them going", []step{
			{0, "missed", false}, {spinBackoff, "ask", true}, {spinBackoff, "found", false},
			{spinBackoff + time.Millisecond, "ask", true},
		}},
		{"a clock set far back does not stop them for longer than a pause", []step{
			{time.Hour, "missed", false}, {0, "ask", true},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p spinPolicy
			for i, s := range c.steps {
				now := t0.Add(s.at)
				switch s.op {
				case "ask":
					if got := p.look(now); got != s.want {
						t.Fatalf("step %d: look at +%v = %v, want %v", i, s.at, got, s.want)
					}
				case "found":
					p.looked(now, true)
				case "missed":
					p.looked(now, false)
				}
			}
		})
	}
}

// Keys whose answer comes late (a program that reads a line, then
// prints) make the looks miss and pause; every byte still reaches the
// log and the server, in order.
func TestSpinPausedLosesNothing(t *testing.T) {
	th := startHolder(t, `printf ready; while read -r l; do sleep 0.001; printf "<%s>" "$l"; done`, 0)
	th.waitEnd(5)
	s, wel := th.connect(wire.FromEnd)
	var want []byte
	st := stream{from: wel.End}
	for i := range 50 {
		s.w.Input([]byte(fmt.Sprintf("%d\n", i)))
		want = fmt.Appendf(want, "<%d>", i)
		s.readTo(&st, wel.End+uint64(len(want)))
	}
	if !bytes.Equal(st.data, want) {
		t.Fatalf("got %q, want %q", st.data, want)
	}
	if got := th.logged(wel.End, wel.End+uint64(len(want))); !bytes.Equal(got, want) {
		t.Fatalf("the log holds %q, want %q", got, want)
	}
	th.h.spinMu.Lock()
	paused := !th.h.spin.look(time.Now())
	th.h.spinMu.Unlock()
	if !paused {
		t.Fatal("the looks are not paused after keys whose answer came late")
	}
}
