package attach

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
						got, _ = g.ended()
					} else {
						got, snap, _ = g.lost()
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

// The input half: attach stops reading its terminal only for a lane that
// runs, answers each server's lane-in once, offers again after a hand-back
// only while the lane runs and it stays, and reads again at every lane end,
// whatever order the frames come in.
func TestLaneGateInput(t *testing.T) {
	type step struct {
		do   string // offer / lane-in / lane-in-no (may not) / back / back-leaving / own / withdraw / ended / lost
		want bool   // lane-in: pause and answer; back: lane-in again; ended, lost: resume the reader
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"lane-in, hand-backs, lane-end", []step{
			{do: "offer"}, {do: "lane-in", want: true},
			{do: "back", want: true}, {do: "back", want: true},
			{do: "ended", want: true},
		}},
		{"a lane-in before any offer is stale", []step{
			{do: "lane-in"}, {do: "ended"},
		}},
		{"a lane-in after the lane ended is stale", []step{
			{do: "offer"}, {do: "ended"}, {do: "lane-in"}, {do: "back"},
		}},
		{"two lane-ins: one answer", []step{
			{do: "offer"}, {do: "lane-in", want: true}, {do: "lane-in"},
			{do: "lost", want: true},
		}},
		{"attach may not: no answer", []step{
			{do: "offer"}, {do: "lane-in-no"}, {do: "back"}, {do: "ended"},
		}},
		{"a lane-in while withdrawing is not answered", []step{
			{do: "offer"}, {do: "withdraw"}, {do: "lane-in"}, {do: "ended"},
		}},
		{"a lane-input while withdrawing: taken, no lane-in, resume at the end", []step{
			{do: "offer"}, {do: "lane-in", want: true}, {do: "own"},
			{do: "back"}, {do: "ended", want: true},
		}},
		{"a lane-input with the detach key: no lane-in again", []step{
			{do: "offer"}, {do: "lane-in", want: true}, {do: "back-leaving"},
			{do: "withdraw"}, {do: "ended", want: true},
		}},
		{"a lane-input after the lane-end: taken, no lane-in", []step{
			{do: "offer"}, {do: "lane-in", want: true}, {do: "ended", want: true},
			{do: "back"}, {do: "ended"},
		}},
		{"a lane-input never asked for", []step{
			{do: "offer"}, {do: "back"}, {do: "lost"},
		}},
		{"a re-offer keeps the reader stopped; a new lane asks again", []step{
			{do: "offer"}, {do: "lane-in", want: true}, {do: "offer"}, {do: "lane-in"},
			{do: "ended", want: true}, {do: "offer"}, {do: "lane-in", want: true},
			{do: "lost", want: true}, {do: "lost"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var g laneGate
			var off int64
			for i, s := range c.steps {
				var got bool
				switch s.do {
				case "offer":
					off++
					if !g.offer(off, true) {
						t.Fatalf("step %d: no offer", i)
					}
				case "lane-in", "lane-in-no":
					got = g.laneIn(s.do == "lane-in")
				case "back", "back-leaving":
					got = g.handBack(s.do == "back")
				case "own":
					g.own([]byte("N"))
				case "withdraw":
					g.withdraw()
				case "ended":
					_, got = g.ended()
				case "lost":
					_, _, got = g.lost()
				}
				if got != s.want {
					t.Fatalf("step %d %s: %v, want %v", i, s.do, got, s.want)
				}
			}
		})
	}
}

// Which attach may offer its terminal for a lane, and stop reading it for
// an input lane.
func TestLaneConds(t *testing.T) {
	base := laneConds{fd: 5, reader: true}
	cases := []struct {
		name          string
		c             laneConds
		version       int
		redraw, leave bool
		off           int64
		output, input bool
	}{
		{"a read-write attach on its own terminal", base, 10, false, false, 100, true, true},
		{"read-only: neither", laneConds{fd: 5, reader: true, readOnly: true}, 10, false, false, 100, false, false},
		{"--alt-screen: neither", laneConds{fd: 5, reader: true, alt: true}, 10, false, false, 100, false, false},
		{"lanes off: neither", laneConds{fd: 5, reader: true, off: true, inputOff: true}, 10, false, false, 100, false, false},
		{"output lanes only", laneConds{fd: 5, reader: true, inputOff: true}, 10, false, false, 100, true, false},
		{"a detach key that is plain typing: no input lane", laneConds{fd: 5, reader: true, keyTyped: true}, 10, false, false, 100, true, false},
		{"no descriptor of its own", laneConds{fd: -1}, 10, false, false, 100, false, false},
		{"a server of version 7", base, 7, false, false, 100, false, false},
		{"a server of version 8: the output lane", base, 8, false, false, 100, true, false},
		{"drawn from the model, or a redraw due", base, 10, true, false, 100, false, true},
		{"before the first snapshot", base, 10, false, false, -2, false, true},
		{"ending", base, 10, false, true, 100, false, false},
	}
	for _, c := range cases {
		if got := c.c.output(c.version, c.redraw, c.off, c.leave); got != c.output {
			t.Errorf("%s: output %v, want %v", c.name, got, c.output)
		}
		if got := c.c.input(c.version, c.leave); got != c.input {
			t.Errorf("%s: input %v, want %v", c.name, got, c.input)
		}
	}
}

// A lane's config from attach's flags.
func TestNewLaneConds(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want laneConds
	}{
		{Config{DetachKey: 0x1c}, laneConds{fd: -1}},
		{Config{DetachKey: 0x1c, Lanes: "off"}, laneConds{fd: -1, off: true, inputOff: true}},
		{Config{DetachKey: 0x1c, Lanes: "output"}, laneConds{fd: -1, inputOff: true}},
		{Config{DetachKey: '\r'}, laneConds{fd: -1, keyTyped: true}},
		{Config{DetachKey: -1, ReadOnly: true, AltScreen: true}, laneConds{fd: -1, readOnly: true, alt: true}},
	} {
		if got := newLaneConds(c.cfg, nil); got != c.want {
			t.Errorf("%+v: %+v, want %+v", c.cfg, got, c.want)
		}
	}
}
