package logind

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// trace runs events on a new Machine and writes what it does after each:
// the actions, then the state, e.g. "take-lock | watching taking".
func trace(t *testing.T, events []string) []string {
	t.Helper()
	t0 := time.Unix(1e9, 0)
	m := NewMachine(3 * time.Second)
	var out []string
	for i, ev := range events {
		now := t0.Add(time.Duration(i) * time.Second)
		var acts []Action
		switch ev {
		case "start":
			acts = m.Start()
		case "locked":
			acts = m.Locked(true)
		case "refused":
			acts = m.Locked(false)
		case "shutdown":
			acts = m.Signal(true, now)
		case "cancel":
			acts = m.Signal(false, now)
		case "done":
			acts = m.Done()
		case "lost":
			acts = m.Lost()
		default:
			t.Fatalf("unknown event %q", ev)
		}
		var words []string
		for _, a := range acts {
			w := a.Kind.String()
			if a.Kind == Prepare {
				w += fmt.Sprintf("@%s", a.Deadline.Sub(now))
			}
			words = append(words, w)
		}
		out = append(out, strings.Join(words, ",")+" | "+m.String())
	}
	return out
}

func TestMachine(t *testing.T) {
	cases := []struct {
		name   string
		events []string
		want   []string
	}{
		{"a shutdown: prepare, then release the lock",
			[]string{"start", "locked", "shutdown", "done"},
			[]string{"take-lock | watching taking", " | watching held", "prepare@3s | preparing held", "release-lock | prepared"}},
		{"cancelled after it was prepared: tell the sessions, take the lock again",
			[]string{"start", "locked", "shutdown", "done", "cancel", "locked"},
			[]string{"take-lock | watching taking", " | watching held", "prepare@3s | preparing held", "release-lock | prepared",
				"cancel,take-lock | watching taking", " | watching held"}},
		{"cancelled while preparing: the lock is kept, the sessions told once done",
			[]string{"start", "locked", "shutdown", "cancel", "done"},
			[]string{"take-lock | watching taking", " | watching held", "prepare@3s | preparing held", " | preparing held cancelled", "cancel | watching held"}},
		{"cancelled, then announced again while preparing: a shutdown after all",
			[]string{"start", "locked", "shutdown", "cancel", "shutdown", "done"},
			[]string{"take-lock | watching taking", " | watching held", "prepare@3s | preparing held", " | preparing held cancelled", " | preparing held", "release-lock | prepared"}},
		{"the signal before the lock is taken: prepare without it, let it go when it comes",
			[]string{"start", "shutdown", "done", "locked"},
			[]string{"take-lock | watching taking", "prepare@3s | preparing taking", " | prepared taking", "release-lock | prepared"}},
		{"the lock comes while preparing: kept until done",
			[]string{"start", "shutdown", "locked", "done"},
			[]string{"take-lock | watching taking", "prepare@3s | preparing taking", " | preparing held", "release-lock | prepared"}},
		{"duplicate signals: one preparation",
			[]string{"start", "locked", "shutdown", "shutdown", "done", "shutdown", "done"},
			[]string{"take-lock | watching taking", " | watching held", "prepare@3s | preparing held", " | preparing held", "release-lock | prepared", " | prepared", " | prepared"}},
		{"inhibit refused: a shutdown is still prepared for",
			[]string{"start", "refused", "shutdown", "done", "cancel", "refused"},
			[]string{"take-lock | watching taking", " | watching", "prepare@3s | preparing", " | prepared", "cancel,take-lock | watching taking", " | watching"}},
		{"a cancel with no shutdown announced: the sessions told (an earlier server may have readied them)",
			[]string{"start", "locked", "cancel", "cancel"},
			[]string{"take-lock | watching taking", " | watching held", "cancel | watching held", "cancel | watching held"}},
		{"a cancel with no shutdown announced, the lock refused before: asked again",
			[]string{"start", "refused", "cancel"},
			[]string{"take-lock | watching taking", " | watching", "cancel,take-lock | watching taking"}},
		{"done with nothing being prepared: nothing",
			[]string{"start", "locked", "done"},
			[]string{"take-lock | watching taking", " | watching held", " | watching held"}},
		{"the bus lost while watching: the lock goes, nothing comes after",
			[]string{"start", "locked", "lost", "shutdown", "cancel", "done"},
			[]string{"take-lock | watching taking", " | watching held", "release-lock | lost", " | lost", " | lost", " | lost"}},
		{"the bus lost while preparing: the preparation ends, then the lock goes",
			[]string{"start", "locked", "shutdown", "lost", "done", "cancel"},
			[]string{"take-lock | watching taking", " | watching held", "prepare@3s | preparing held", " | preparing held lost", "release-lock | lost", " | lost"}},
		{"the bus lost while preparing, then a start: nothing asked for",
			[]string{"shutdown", "lost", "start", "done"},
			[]string{"prepare@3s | preparing", " | preparing lost", " | preparing lost", " | lost"}},
		{"the bus lost while the lock is asked for: let go when it comes",
			[]string{"start", "lost", "locked"},
			[]string{"take-lock | watching taking", " | lost taking", "release-lock | lost"}},
		{"events before start: the signal is prepared for, start takes the lock",
			[]string{"shutdown", "start", "locked", "done"},
			[]string{"prepare@3s | preparing", "take-lock | preparing taking", " | preparing held", "release-lock | prepared"}},
		{"a lock answer nobody asked for is let go",
			[]string{"locked", "refused"},
			[]string{"release-lock | watching", " | watching"}},
		{"a second start while the lock is held or asked for: nothing",
			[]string{"start", "start", "locked", "start"},
			[]string{"take-lock | watching taking", " | watching taking", " | watching held", " | watching held"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := trace(t, c.events)
			for i := range c.events {
				if i >= len(c.want) || got[i] != c.want[i] {
					w := "(none)"
					if i < len(c.want) {
						w = c.want[i]
					}
					t.Fatalf("after %s (event %d):\n got  %q\n want %q\nwhole trace: %q", c.events[i], i, got[i], w, got)
				}
			}
		})
	}
}
