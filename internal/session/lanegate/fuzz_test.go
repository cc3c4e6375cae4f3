package lanegate

import (
	"testing"
	"time"
)

// FuzzGate drives a gate with any sequence of events and checks what the
// write loop relies on: a lane opens only at the viewer's offer, the next
// offset and the end, and only when none is open; each open lane ends once
// (written or resynced), never before its start nor past what reached the
// server; no output flows while a lane is open.
func FuzzGate(f *testing.F) {
	f.Add([]byte{0, 10, 4, 3, 12, 4, 6})
	f.Add([]byte{0, 0, 4, 1, 4, 4, 5, 4})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var g Gate
		v, s := owner, sess
		now := time.Unix(0, 0)
		var next, end uint64
		open, start := false, uint64(0)
		if len(ops) > 0 && ops[0]&0x80 != 0 {
			// A viewer that resumes after a lost connection claims its
			// earlier lane: held, as behind a lane open at its offset.
			g.Claim(next)
			open = true
		}
		for i := 0; i < len(ops); i++ {
			arg := uint64(0)
			if i+1 < len(ops) {
				arg = uint64(ops[i+1])
			}
			switch ops[i] % 7 {
			case 0:
				g.Offer(next + arg%3)
				i++
			case 1:
				g.Withdraw()
			case 2:
				g.Ended(start + arg)
				i++
			case 3:
				g.Lost()
			case 4:
				end += arg % 50
				i++
			case 5:
				s.Cols = 80 + uint16(arg%2)
				s.ReqCols = s.Cols
				i++
			case 6:
				now = now.Add(time.Duration(arg) * 10 * time.Millisecond)
				i++
			}
			for range 8 {
				a := g.Step(now, v, s, next, end)
				switch a.Kind {
				case Open:
					if open || a.At != next || next != end {
						t.Fatalf("open at %d with next %d end %d (open %v)", a.At, next, end, open)
					}
					open, start = true, a.At
					continue
				case Written:
					if !open || a.From != start || a.To < a.From || a.To > end {
						t.Fatalf("written [%d,%d) for a lane at %d (open %v, end %d)", a.From, a.To, start, open, end)
					}
					open, next = false, a.To
					continue
				case Resync:
					if !open {
						t.Fatal("a resync with no lane")
					}
					open, next = false, end
					continue
				case Stream:
					if open {
						t.Fatal("output flows while a lane is open")
					}
					next = end // the loop sends what there is
				case Hold, Revoke:
					if !open {
						t.Fatalf("%v with no lane", a.Kind)
					}
					if a.Kind == Revoke {
						continue
					}
				case Claim:
					if !open {
						t.Fatal("a claim with no lane held")
					}
					continue
				case Answer:
					if open {
						t.Fatal("a withdraw answered while a lane is open")
					}
					continue
				}
				break
			}
		}
	})
}
