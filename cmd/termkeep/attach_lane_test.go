package main

import (
	"reflect"
	"testing"
)

// attach's lane gate: its own lines never reach the terminal while a lane
// may write there, and each wait asks the server once.
func TestLaneGate(t *testing.T) {
	type step struct {
		do       string // offer N / offer-no N / own X / withdraw / ended / lost
		off      int64
		b        string
		now      string   // own: written now
		send     bool     // offer: an offer sent; own, withdraw: a lane-off sent
		written  []string // ended, lost: what is written then
		snapshot bool     // lost
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"idle writes at once", []step{{do: "own", b: "A", now: "A"}}},
		{"an offer, then a notice waits for the lane-end", []step{
			{do: "offer", off: 10, send: true},
			{do: "own", b: "N1", send: true},
			{do: "own", b: "N2"},   // one lane-off is enough
			{do: "offer", off: 20}, // no offer while a lane-off waits
			{do: "ended", written: []string{"N1", "N2"}},
			{do: "own", b: "N3", now: "N3"},
		}},
		{"no offer twice at one offset; again at another", []step{
			{do: "offer", off: 10, send: true},
			{do: "offer", off: 10},
			{do: "offer", off: 12, send: true},
		}},
		{"no offer when it may not, or before any output", []step{
			{do: "offer-no", off: 10},
			{do: "offer", off: -1},
			{do: "own", b: "A", now: "A"},
		}},
		{"a lane-end nobody asked for lets attach write and offer again", []step{
			{do: "offer", off: 10, send: true},
			{do: "ended"},
			{do: "offer", off: 10, send: true},
		}},
		{"withdraw with nothing to write (detach)", []step{
			{do: "offer", off: 3, send: true},
			{do: "withdraw", send: true},
			{do: "withdraw"},
			{do: "ended"},
			{do: "withdraw"},
		}},
		{"lost while offered: a snapshot, and the kept lines", []step{
			{do: "offer", off: 3, send: true},
			{do: "own", b: "N", send: true},
			{do: "lost", written: []string{"N"}, snapshot: true},
			{do: "lost"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var g laneGate
			for i, s := range c.steps {
				switch s.do {
				case "offer", "offer-no":
					if got := g.offer(s.off, s.do == "offer"); got != s.send {
						t.Fatalf("step %d %s %d: offer = %v", i, s.do, s.off, got)
					}
				case "own":
					now, w := g.own([]byte(s.b))
					if string(now) != s.now || w != s.send {
						t.Fatalf("step %d own %q: now %q, lane-off %v", i, s.b, now, w)
					}
				case "withdraw":
					if w := g.withdraw(); w != s.send {
						t.Fatalf("step %d withdraw: lane-off %v", i, w)
					}
				case "ended", "lost":
					var got [][]byte
					snap := false
					if s.do == "ended" {
						got = g.ended()
					} else {
						got, snap = g.lost()
					}
					var gs []string
					for _, b := range got {
						gs = append(gs, string(b))
					}
					if !reflect.DeepEqual(gs, s.written) || snap != s.snapshot || !g.idle() {
						t.Fatalf("step %d %s: wrote %q, snapshot %v, idle %v", i, s.do, gs, snap, g.idle())
					}
				}
			}
		})
	}
}
