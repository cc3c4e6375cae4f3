package logind

import (
	"testing"
	"time"
)

// FuzzMachine drives a Machine with any sequence of events (one a byte)
// and checks what must always hold: the lock is asked for only when it is
// neither held nor asked for, let go only when held, and never held
// once the sessions are ready for a shutdown; a preparation is started
// only when none runs; nothing is asked for after the bus is lost.
func FuzzMachine(f *testing.F) {
	f.Add([]byte{0, 1, 3, 5})
	f.Add([]byte{3, 0, 5, 1, 4, 0})
	f.Add([]byte{0, 1, 3, 4, 3, 6, 5, 1})
	f.Fuzz(func(t *testing.T, events []byte) {
		m := NewMachine(time.Second)
		now := time.Unix(1e9, 0)
		held, taking, preparing, lostBus := false, false, false, false
		for i, ev := range events {
			now = now.Add(time.Millisecond)
			var acts []Action
			switch ev % 7 {
			case 0:
				acts = m.Start()
			case 1:
				acts = m.Locked(true)
				if !taking || held {
					// A lock nobody asked for: the answer lets that one go.
					if len(acts) != 1 || acts[0].Kind != ReleaseLock {
						t.Fatalf("event %d: an unasked lock gives %v", i, acts)
					}
					acts = nil
				} else {
					held = true
				}
				taking = false
			case 2:
				acts = m.Locked(false)
				taking = false
			case 3:
				acts = m.Signal(true, now)
			case 4:
				acts = m.Signal(false, now)
			case 5:
				acts = m.Done()
				preparing = false
			case 6:
				acts = m.Lost()
				lostBus = true
			}
			for _, a := range acts {
				switch a.Kind {
				case TakeLock:
					if held || taking || lostBus {
						t.Fatalf("event %d (%d): take-lock with held=%v taking=%v lost=%v", i, ev, held, taking, lostBus)
					}
					taking = true
				case ReleaseLock:
					if !held {
						t.Fatalf("event %d (%d): release-lock of no lock", i, ev)
					}
					held = false
				case Prepare:
					if preparing || lostBus {
						t.Fatalf("event %d (%d): prepare with preparing=%v lost=%v", i, ev, preparing, lostBus)
					}
					if !a.Deadline.After(now) {
						t.Fatalf("event %d: prepare deadline %s not after now", i, a.Deadline)
					}
					preparing = true
				case Cancel:
					if preparing {
						t.Fatalf("event %d: cancel while preparing", i)
					}
				}
			}
			if held != m.Holding() {
				t.Fatalf("event %d (%d): machine says held=%v, its actions left held=%v", i, ev, m.Holding(), held)
			}
			if held && (m.phase == prepared || m.phase == lost) {
				t.Fatalf("event %d (%d): lock held while %s", i, ev, m)
			}
		}
	})
}
