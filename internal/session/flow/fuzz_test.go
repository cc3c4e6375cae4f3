package flow

import (
	"testing"
	"time"

	"termkeep/internal/wire"
)

// FuzzProgress drives a Progress with any sequence of observations, writes,
// gaps and resyncs, as a hostile viewer and a bursty session could make
// them, and checks what it promises whatever the input: it never sends
// from anywhere but its position, never moves a viewer back but by a
// resync to the present, never resyncs a waiter, a replaying viewer or one
// within its queue, never waits for acks it cannot get, and tells gaps
// that move forward within the output.
func FuzzProgress(f *testing.F) {
	f.Add([]byte{0, 10, 1, 2, 3, 4, 5}, uint16(1), false, true)
	f.Add([]byte{0, 200, 0, 0, 1, 50, 0, 255, 3, 7}, uint16(16), true, true)
	f.Add([]byte{0, 1, 2, 3, 0, 1, 2, 3, 4, 4, 4, 4}, uint16(0), false, false)
	f.Fuzz(func(t *testing.T, ops []byte, queue uint16, waiter, live bool) {
		base := time.Unix(1e9, 0)
		now := base
		var end, acked uint64
		acking := false
		p := New(0, live, Config{Queue: uint64(queue), Waiter: waiter})
		var last Action
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%6, uint64(ops[i+1])
			before := p.Next()
			switch op {
			case 0: // output arrives, time passes
				end += arg * arg
				now = now.Add(time.Duration(arg) * 10 * time.Millisecond)
			case 1: // observe
				o := Observation{End: end, Acking: acking, Acked: acked, Draining: func() bool { return arg%3 == 0 }}
				last = p.Observe(now, o)
				drawn := p.Next()
				if acking {
					drawn = min(acked, p.Next())
				}
				switch last.Kind {
				case Send:
					if last.From != p.Next() || p.Next() >= end {
						t.Fatalf("send from %d with next %d, end %d", last.From, p.Next(), end)
					}
				case CaughtUp:
					if p.Next() < end {
						t.Fatalf("caught up at %d before the end %d", p.Next(), end)
					}
				case AwaitAck:
					if !acking || p.Next()-drawn < uint64(queue) {
						t.Fatalf("awaits acks with %d of %d drawn, queue %d (acking %v)", drawn, p.Next(), queue, acking)
					}
				case Resync:
					if waiter || end-drawn <= uint64(queue) || p.State() != Behind {
						t.Fatalf("resync of a viewer %d behind, queue %d, waiter %v, state %v", end-drawn, queue, waiter, p.State())
					}
				default:
					t.Fatalf("Observe returned %v", last)
				}
			case 2: // a write of some of what was asked
				if last.Kind == Send && p.Next() < end {
					n := min(arg*arg+1, end-p.Next())
					p.Sent(int(n), now, now.Add(time.Duration(arg)*10*time.Millisecond))
					now = now.Add(time.Duration(arg) * 10 * time.Millisecond)
				}
			case 3: // the viewer acks, truthfully or not
				acking = true
				if arg%2 == 0 {
					acked = max(acked, p.Next()-min(p.Next(), arg*arg))
				} else {
					acked = max(acked, arg<<40)
				}
			case 4: // a resync or a gap done as asked
				if last.Kind == Resync {
					p.Resynced(end)
				}
			case 5: // the log lost the viewer's next byte
				if p.Next() < end {
					first := p.Next() + arg*arg
					a := p.Gone(end, first)
					switch {
					case a.Kind == Gap && (!waiter || a.From != p.Next() || a.To <= a.From || a.To > end):
						t.Fatalf("gone at %d (end %d, first %d): %v", p.Next(), end, first, a)
					case a.Kind == Resync && waiter:
						t.Fatalf("a waiter resynced: %v", a)
					}
					if a.Kind == Gap {
						p.Skipped(a.To)
					} else {
						last = a
					}
				}
			}
			if p.Next() < before {
				t.Fatalf("op %d moved the viewer back from %d to %d", op, before, p.Next())
			}
			if p.Next() > end {
				t.Fatalf("op %d moved the viewer to %d, past the end %d", op, p.Next(), end)
			}
		}
	})
}

// FuzzResume: whatever a hello says, a viewer starts within the log's
// output or is refused, and starts before the log's first byte only as a
// waiter told of the gap.
func FuzzResume(f *testing.F) {
	f.Add(int64(-2), "viewer", uint64(10), uint64(20))
	f.Add(int64(5), "waiter", uint64(10), uint64(20))
	f.Add(int64(1<<62), "", uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, from int64, role string, first, end uint64) {
		if first > end {
			first, end = end, first
		}
		s, err := Resume(wire.Hello{From: from, Role: role}, first, end)
		if err != nil {
			if from < 0 || uint64(from) <= end {
				t.Fatalf("Resume(%d) of [%d, %d) refused: %v", from, first, end, err)
			}
			return
		}
		if s.From > end {
			t.Fatalf("Resume(%d) of [%d, %d) starts at %d", from, first, end, s.From)
		}
		if s.Resume == wire.ResumeBytes && s.From < first && (!s.Gap || role != wire.RoleWaiter) {
			t.Fatalf("Resume(%d) of [%d, %d) sends bytes from %d without a gap: %+v", from, first, end, s.From, s)
		}
	})
}
