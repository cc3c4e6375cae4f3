package lanegate

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"termkeep/internal/wire"
)

var (
	owner = Viewer{Kind: wire.ViewerCLI, Local: true, Terminal: true, Version: 8, Cols: 80, Rows: 24}
	sess  = Session{HolderVersion: 10, Cols: 80, Rows: 24, ReqCols: 80, ReqRows: 24}
)

func TestEligible(t *testing.T) {
	with := func(f func(*Viewer, *Session)) (Viewer, Session) {
		v, s := owner, sess
		f(&v, &s)
		return v, s
	}
	cases := []struct {
		name string
		f    func(*Viewer, *Session)
		want bool
	}{
		{"the owner's attach at the session's size", func(*Viewer, *Session) {}, true},
		{"no size asked yet", func(_ *Viewer, s *Session) { s.ReqCols, s.ReqRows = 0, 0 }, true},
		{"read-only", func(v *Viewer, _ *Session) { v.ReadOnly = true }, false},
		{"a waiter", func(v *Viewer, _ *Session) { v.Waiter = true }, false},
		{"a browser", func(v *Viewer, _ *Session) { v.Kind = "web" }, false},
		{"a share link", func(v *Viewer, _ *Session) { v.Kind = "share" }, false},
		{"no kind", func(v *Viewer, _ *Session) { v.Kind = "" }, false},
		{"over TCP or another uid", func(v *Viewer, _ *Session) { v.Local = false }, false},
		{"no terminal handed over", func(v *Viewer, _ *Session) { v.Terminal = false }, false},
		{"a viewer of version 7", func(v *Viewer, _ *Session) { v.Version = 7 }, false},
		{"a holder of version 6", func(_ *Viewer, s *Session) { s.HolderVersion = 6 }, false},
		{"no holder connection", func(_ *Viewer, s *Session) { s.HolderVersion = 0 }, false},
		{"ended", func(_ *Viewer, s *Session) { s.Ended = true }, false},
		{"narrower terminal", func(v *Viewer, _ *Session) { v.Cols = 79 }, false},
		{"taller terminal", func(v *Viewer, _ *Session) { v.Rows = 25 }, false},
		{"size unknown", func(v *Viewer, s *Session) { v.Cols, v.Rows, s.Cols, s.Rows = 0, 0, 0, 0 }, false},
		{"a resize to another size on its way", func(_ *Viewer, s *Session) { s.ReqCols = 100 }, false},
		{"a resize to its size on its way", func(_ *Viewer, s *Session) { s.Cols = 100 }, false},
		{"a waiter may hand nothing", func(v *Viewer, _ *Session) { v.Waiter = true; v.Terminal = false }, false},
		{"the largest size", func(v *Viewer, s *Session) {
			v.Cols, v.Rows, s.Cols, s.Rows, s.ReqCols, s.ReqRows = 65535, 65535, 65535, 65535, 65535, 65535
		}, true},
	}
	for _, c := range cases {
		v, s := with(c.f)
		if got := Eligible(v, s); got != c.want {
			t.Errorf("%s: Eligible = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestOpenable(t *testing.T) {
	cases := []struct {
		name    string
		f       func(*Session)
		at, end uint64
		want    bool
	}{
		{"at the end, no lane running", func(*Session) {}, 100, 100, true},
		{"at the start of the output", func(*Session) {}, 0, 0, true},
		{"output came since the gate said open", func(*Session) {}, 100, 164, false},
		{"an offset past the end", func(*Session) {}, 101, 100, false},
		{"another viewer's lane not ended yet", func(s *Session) { s.Lane = true }, 100, 100, false},
		{"no holder connection", func(s *Session) { s.HolderVersion = 0 }, 100, 100, false},
		{"a holder of version 6", func(s *Session) { s.HolderVersion = 6 }, 100, 100, false},
		{"a holder of version 7", func(s *Session) { s.HolderVersion = 7 }, 100, 100, true},
		{"a holder from the future", func(s *Session) { s.HolderVersion = math.MaxInt }, 100, 100, true},
		{"a negative version", func(s *Session) { s.HolderVersion = -1 }, 100, 100, false},
		{"the last offset", func(*Session) {}, math.MaxUint64, math.MaxUint64, true},
	}
	for _, c := range cases {
		s := sess
		c.f(&s)
		if got := Openable(s, c.at, c.end); got != c.want {
			t.Errorf("%s: Openable = %v, want %v", c.name, got, c.want)
		}
	}
}

// A trace is a script of events and the actions Step returns, one per
// line: "offer N", "withdraw", "end N", "lost", "resize C R" (the
// session's size, the viewer's stays 80x24), "at NEXT END +MS" (a Step at
// that next offset, session end and time) followed by "=> action".
func TestGateTraces(t *testing.T) {
	cases := []struct{ name, script string }{
		{"an offer at the end opens a lane, which ends having written", `
			at 0 0 +0 => stream
			offer 100
			at 100 100 +0 => open 100
			at 100 150 +1 => hold
			end 150
			at 100 150 +2 => written 100 150
			at 150 150 +3 => stream`},
		{"an offer behind the end waits for the viewer", `
			offer 100
			at 100 120 +0 => stream
			offer 120
			at 120 120 +0 => open 120`},
		{"an offer the server has sent past is stale", `
			offer 100
			at 120 120 +0 => stream`},
		{"a refused lane backs off, doubling", `
			offer 100
			at 100 100 +0 => open 100
			end 100
			at 100 100 +1 => written 100 100
			offer 100
			at 100 100 +2 => stream retry +51
			at 100 100 +51 => open 100
			end 100
			at 100 100 +52 => written 100 100
			offer 100
			at 100 100 +100 => stream retry +152
			at 100 100 +152 => open 100
			end 100
			at 100 100 +153 => written 100 100`},
		{"a lane that wrote resets the backoff", `
			offer 100
			at 100 100 +0 => open 100
			end 100
			at 100 100 +0 => written 100 100
			offer 100
			at 100 100 +50 => open 100
			end 130
			at 100 130 +60 => written 100 130
			offer 130
			at 130 130 +60 => open 130`},
		{"a withdraw with no lane is answered at once", `
			offer 100
			withdraw
			at 100 100 +0 => answer 100
			at 100 100 +0 => stream`},
		{"a withdraw revokes the lane, answered by its end", `
			offer 100
			at 100 100 +0 => open 100
			withdraw
			at 100 200 +0 => revoke
			at 100 200 +0 => hold
			end 180
			at 100 200 +1 => written 100 180
			at 180 200 +1 => stream`},
		{"a resize to another size revokes, once", `
			offer 0
			at 0 0 +0 => open 0
			resize 100 24
			at 0 10 +0 => revoke
			at 0 10 +0 => hold
			end 10
			at 0 10 +0 => written 0 10
			offer 10
			at 10 10 +0 => stream`},
		{"a lost connection resyncs the viewer", `
			offer 5
			at 5 5 +0 => open 5
			lost
			at 5 50 +0 => resync
			at 50 50 +0 => stream`},
		{"an end that comes before the loss wins", `
			offer 5
			at 5 5 +0 => open 5
			end 9
			lost
			at 5 50 +0 => written 5 9`},
		{"hostile: an end below the start is its start", `
			offer 100
			at 100 100 +0 => open 100
			end 3
			at 100 100 +0 => written 100 100`},
		{"hostile: an end past what reached the server is cut there", `
			offer 100
			at 100 100 +0 => open 100
			end 999999
			at 100 120 +0 => written 100 120`},
		{"hostile: ends with no lane are dropped", `
			end 50
			end 60
			offer 0
			at 0 0 +0 => open 0
			at 0 0 +0 => hold`},
		{"hostile: an offer while a lane runs is ignored", `
			offer 0
			at 0 0 +0 => open 0
			offer 40
			end 20
			at 0 40 +0 => written 0 20
			at 20 40 +0 => stream`},
		{"a claim holds the viewer until the holder says where the lane ended", `
			claim 100
			at 100 180 +0 => claim
			at 100 180 +1 => hold
			end 160
			at 100 180 +2 => written 100 160
			at 160 180 +3 => stream`},
		{"a claimed lane that wrote nothing past the viewer's offset is no refusal", `
			claim 100
			at 100 180 +0 => claim
			end 0
			at 100 180 +1 => written 100 100
			offer 180
			at 180 180 +2 => open 180`},
		{"a claim waits for a holder connection", `
			claim 100
			holder 0
			at 100 100 +0 => hold
			holder 10
			at 100 100 +1 => claim`},
		{"a claim no holder can answer draws the screen anew", `
			claim 100
			holder 9
			at 100 100 +0 => resync
			at 100 100 +1 => stream`},
		{"a claim on an ended session with no holder draws the screen anew", `
			claim 100
			holder 0
			ended
			at 100 100 +0 => resync`},
		{"a claim whose holder connection goes before it is asked is asked of the next", `
			claim 100
			lost
			at 100 100 +0 => claim`},
		{"a claim whose holder connection goes after it is asked is asked again", `
			claim 100
			at 100 100 +0 => claim
			at 100 100 +1 => hold
			lost
			at 100 100 +2 => claim
			end 100
			at 100 100 +3 => written 100 100`},
		{"hostile: an end past what reached the server is cut to it", `
			claim 100
			at 100 120 +0 => claim
			end 500
			at 100 120 +1 => written 100 120`},
		{"hostile: an offer and a withdraw while claiming wait for the answer", `
			claim 100
			offer 100
			withdraw
			at 100 100 +0 => claim
			end 100
			at 100 100 +1 => written 100 100
			at 100 100 +2 => stream`},
		{"hostile: a withdraw then an offer is an offer", `
			withdraw
			offer 7
			at 7 7 +0 => open 7`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var g Gate
			v, s := owner, sess
			t0 := time.Unix(1000, 0)
			for _, line := range strings.Split(strings.TrimSpace(c.script), "\n") {
				line = strings.TrimSpace(line)
				var a, b uint64
				switch {
				case strings.HasPrefix(line, "offer "):
					fmt.Sscan(line[6:], &a)
					g.Offer(a)
				case line == "withdraw":
					g.Withdraw()
				case strings.HasPrefix(line, "end "):
					fmt.Sscan(line[4:], &a)
					g.Ended(a)
				case line == "lost":
					g.Lost()
				case strings.HasPrefix(line, "claim "):
					fmt.Sscan(line[6:], &a)
					g.Claim(a)
				case strings.HasPrefix(line, "holder "):
					fmt.Sscan(line[7:], &s.HolderVersion)
				case line == "ended":
					s.Ended = true
				case strings.HasPrefix(line, "resize "):
					fmt.Sscan(line[7:], &s.Cols, &s.Rows)
					s.ReqCols, s.ReqRows = s.Cols, s.Rows
				case strings.HasPrefix(line, "at "):
					var ms int
					var want string
					before, after, _ := strings.Cut(line[3:], " => ")
					fmt.Sscanf(before, "%d %d +%d", &a, &b, &ms)
					want = after
					now := t0.Add(time.Duration(ms) * time.Millisecond)
					if got := show(g.Step(now, v, s, a, b), t0); got != want {
						t.Fatalf("%s: got %q, want %q", line, got, want)
					}
				default:
					t.Fatalf("bad line %q", line)
				}
			}
		})
	}
}

func show(a Action, t0 time.Time) string {
	switch a.Kind {
	case Stream:
		if !a.RetryAt.IsZero() {
			return fmt.Sprintf("stream retry +%d", a.RetryAt.Sub(t0).Milliseconds())
		}
		return "stream"
	case Open:
		return fmt.Sprintf("open %d", a.At)
	case Hold:
		return "hold"
	case Revoke:
		return "revoke"
	case Written:
		return fmt.Sprintf("written %d %d", a.From, a.To)
	case Answer:
		return fmt.Sprintf("answer %d", a.At)
	case Resync:
		return "resync"
	case Claim:
		return "claim"
	}
	return "?"
}

func TestInputLane(t *testing.T) {
	cli := Viewer{Kind: wire.ViewerCLI, Local: true, Terminal: true, Version: 9}
	with := func(f func(*Viewer)) Viewer { v := cli; f(&v); return v }
	for _, tc := range []struct {
		name   string
		v      Viewer
		pid    int
		holder int
		ok     bool
	}{
		{"a local cli viewer of version 9, a holder of 9", cli, 4242, 9, true},
		{"a holder newer still", cli, 4242, 12, true},
		{"a viewer newer still", with(func(v *Viewer) { v.Version = 10 }), 4242, 9, true},
		{"a viewer of version 8", with(func(v *Viewer) { v.Version = 8 }), 4242, 9, false},
		{"a holder of version 8", cli, 4242, 8, false},
		{"no holder", cli, 4242, 0, false},
		{"the pid unknown", cli, 0, 9, false},
		{"a negative pid", cli, -1, 9, false},
		{"a pid past pid_t", cli, math.MaxInt32 + 1, 9, false},
		{"the largest pid_t", cli, math.MaxInt32, 9, true},
		{"read-only", with(func(v *Viewer) { v.ReadOnly = true }), 4242, 9, false},
		{"a waiter", with(func(v *Viewer) { v.Waiter = true }), 4242, 9, false},
		{"not local", with(func(v *Viewer) { v.Local = false }), 4242, 9, false},
		{"a browser", with(func(v *Viewer) { v.Kind = "web" }), 4242, 9, false},
		{"a share link", with(func(v *Viewer) { v.Kind = "share" }), 4242, 9, false},
		{"no terminal handed over", with(func(v *Viewer) { v.Terminal = false }), 4242, 9, false},
	} {
		pid, ok := InputLane(tc.v, tc.pid, tc.holder)
		if ok != tc.ok || (ok && int(pid) != tc.pid) || (!ok && pid != 0) {
			t.Errorf("%s: InputLane = %d, %v; want %v", tc.name, pid, ok, tc.ok)
		}
	}
}
