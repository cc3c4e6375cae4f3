package liveness

import (
	"strings"
	"testing"
	"time"
)

// The traces drive a Pinger as the viewer's pinger does, with the default
// interval (30 s) and timeout (10 s): it wakes every 5 s and counts a wake
// more than 2.5 s late as a stall. A line is a wake:
//
//	T[..U] [heard=H] => action [restarted]
//
// T and H are durations since the viewer arrived; T..U is a wake every
// step from T to U, each with the same answer. heard stays what it was
// last set to (at first: never). "#" starts a comment.
func TestTraces(t *testing.T) {
	for _, tc := range []struct{ name, script string }{
		{"a viewer that answers every ping, on an on-time loop", `
5s..25s              => wait
30s                  => ping
35s..55s heard=30.1s => wait
60s                  => ping
65s..85s heard=60.1s => wait
90s                  => ping
95s..115s heard=90.2s => wait
120s                 => ping
`},
		{"a viewer silent across on-time pings is dropped", `
5s..25s  => wait
30s      => ping
# silent for the interval plus the timeout at 40 s: not yet beyond it
35s..40s => wait
45s      => drop
`},
		{"the loop late by 60 s keeps a viewer that answered", `
5s..25s          => wait
30s              => ping
35s heard=30.1s  => wait
# the server is stopped from 36 s to 100 s: the wake due at 40 s comes at
# 100 s, and the viewer's answers are still unread
100s             => ping restarted
105s             => wait
# its answer to the ping at 100 s is read
110s..125s heard=100.1s => wait
130s             => ping
135s heard=130.1s => wait
`},
		{"after a stall, a truly silent viewer is dropped an interval and timeout later", `
5s..25s   => wait
30s       => ping
# stopped from 31 s to 90 s
90s       => ping restarted
95s..115s => wait
120s      => ping
125s..130s => wait
135s      => drop
`},
		{"a stall that ends just before a ping is due is seen", `
5s..25s          => wait
30s              => ping
# the answer to the ping at 30 s came, but the server stopped before
# reading it, at 35.5 s, and went on at 59.99 s: a loop that woke only to
# ping would wake on time at 60 s and find the viewer silent for 60 s
35s              => wait
59990ms          => ping restarted
60s              => wait
65s heard=30.1s  => wait
70s heard=60.1s  => wait
`},
		{"a viewer that answers late once is kept", `
5s..25s             => wait
30s                 => ping
35s                 => wait
# the answer comes 9.9 s after the ping
39900ms heard=39.9s => wait
45s..55s            => wait
60s                 => ping
65s heard=60.1s     => wait
`},
		{"a loop that is always a little late still judges", `
# a busy machine: every wake 2.4 s late, less than a stall
7400ms  => wait
14800ms => wait
22200ms => wait
29600ms => wait
37s     => ping
44400ms => drop
`},
		{"a wake exactly LateBy late is on time", `
7500ms  => wait
15s     => wait
22500ms => wait
30s     => ping
37500ms => wait
45s     => drop
`},
		{"a wake just past LateBy restarts", `
5s          => wait
12500000001ns => ping restarted
`},
		{"time that goes backwards drops nobody", `
5s..25s         => wait
30s             => ping
35s heard=30.1s => wait
# a caller's clock that stepped back an hour
-1h             => wait
-3595s..-3575s  => wait
-3570s          => ping
`},
		{"a frame heard in the future never makes the silence negative", `
5s heard=1h  => wait
10s..25s     => wait
30s          => ping
35s..55s     => wait
60s          => ping
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
			p := New(Config{Interval: 30 * time.Second, Timeout: 10 * time.Second}, t0)
			var heard time.Time
			for n, line := range strings.Split(strings.TrimSpace(tc.script), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				step, want, ok := strings.Cut(line, "=>")
				if !ok {
					t.Fatalf("line %d: no =>: %q", n+1, line)
				}
				fields := strings.Fields(step)
				from, to, isRange := strings.Cut(fields[0], "..")
				at, until := parse(t, from), parse(t, from)
				if isRange {
					until = parse(t, to)
				}
				for _, f := range fields[1:] {
					h, ok := strings.CutPrefix(f, "heard=")
					if !ok {
						t.Fatalf("line %d: %q", n+1, f)
					}
					heard = t0.Add(parse(t, h))
				}
				for ; at <= until; at += p.Step() {
					v := p.Wake(t0.Add(at), heard)
					got := v.Action.String()
					if v.Restarted {
						got += " restarted"
					}
					if got != strings.TrimSpace(want) {
						t.Fatalf("line %d %q at %s: got %q (silent %s, late %s)", n+1, line, at, got, v.Silent, v.Late)
					}
				}
			}
		})
	}
}

func parse(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A zero or negative configuration still makes a loop that sleeps and a
// viewer that is judged.
func TestHostileConfig(t *testing.T) {
	for _, cfg := range []Config{{}, {Interval: -time.Second, Timeout: -time.Hour}, {Interval: time.Nanosecond, Timeout: time.Nanosecond}} {
		t0 := time.Unix(0, 0)
		p := New(cfg, t0)
		if p.Step() < time.Millisecond || p.LateBy() < time.Millisecond {
			t.Errorf("%+v: step %s, late-by %s", cfg, p.Step(), p.LateBy())
		}
		if v := p.Wake(t0.Add(p.Step()), time.Time{}); v.Action == Drop {
			t.Errorf("%+v: dropped at the first step: %+v", cfg, v)
		}
		dropped := false
		for at := p.Step() * 2; at < time.Second && !dropped; at += p.Step() {
			dropped = p.Wake(t0.Add(at), time.Time{}).Action == Drop
		}
		if !dropped {
			t.Errorf("%+v: a viewer never heard from was not dropped within a second", cfg)
		}
	}
}

// Step and LateBy leave the timeout room for an answer: a stall that goes
// unnoticed is shorter than the timeout.
func TestUnnoticedStallFitsTheTimeout(t *testing.T) {
	for _, cfg := range []Config{
		{Interval: 30 * time.Second, Timeout: 10 * time.Second},
		{Interval: 300 * time.Millisecond, Timeout: 300 * time.Millisecond},
		{Interval: time.Second, Timeout: time.Minute},
	} {
		p := New(cfg, time.Unix(0, 0))
		if p.Step()+p.LateBy() >= cfg.Timeout {
			t.Errorf("%+v: a stall of up to %s goes unnoticed, not less than the timeout", cfg, p.Step()+p.LateBy())
		}
	}
}
