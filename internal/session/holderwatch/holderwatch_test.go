package holderwatch

import (
	"testing"
	"time"
)

var t0 = time.Unix(1e9, 0)

func at(d time.Duration) time.Time { return t0.Add(d) }

const s = time.Second

// Each case drives a Watch (interval 5 s, timeout 10 s: steps of 2.5 s, a
// wake more than 2.5 s late is a stall) through wakes; heard is when the
// holder was last heard from at that wake (-1: never).
func TestWatch(t *testing.T) {
	type wake struct {
		at, heard    time.Duration
		ping         bool
		unresponsive bool
		changed      bool
	}
	never := time.Duration(-1)
	for _, tc := range []struct {
		name  string
		wakes []wake
	}{
		{"a holder that answers stays responsive", []wake{
			{at: 2500 * time.Millisecond, heard: never},
			{at: 5 * s, heard: never, ping: true},
			{at: 7500 * time.Millisecond, heard: 5100 * time.Millisecond},
			{at: 10 * s, heard: 5100 * time.Millisecond, ping: true},
			{at: 15 * s, heard: 10100 * time.Millisecond, ping: true},
			{at: 20 * s, heard: 15100 * time.Millisecond, ping: true},
		}},
		{"silent past interval plus timeout: unresponsive, pinged on", []wake{
			{at: 2500 * time.Millisecond, heard: never},
			{at: 5 * s, heard: never, ping: true},
			{at: 7500 * time.Millisecond, heard: never},
			{at: 10 * s, heard: never, ping: true},
			{at: 12500 * time.Millisecond, heard: never},
			{at: 15 * s, heard: never, ping: true},
			{at: 17500 * time.Millisecond, heard: never, ping: true, unresponsive: true, changed: true},
			{at: 20 * s, heard: never, unresponsive: true},
			{at: 22500 * time.Millisecond, heard: never, ping: true, unresponsive: true},
			{at: 25 * s, heard: never, unresponsive: true},
		}},
		{"an answer after the judgement clears it", []wake{
			{at: 2500 * time.Millisecond, heard: never},
			{at: 5 * s, heard: never, ping: true},
			{at: 7500 * time.Millisecond, heard: never},
			{at: 10 * s, heard: never, ping: true},
			{at: 12500 * time.Millisecond, heard: never},
			{at: 15 * s, heard: never, ping: true},
			{at: 17500 * time.Millisecond, heard: never, ping: true, unresponsive: true, changed: true},
			{at: 20 * s, heard: 19 * s, ping: true, changed: true},
			{at: 22500 * time.Millisecond, heard: 19 * s},
		}},
		{"an answer from before the judgement does not clear it", []wake{
			{at: 2500 * time.Millisecond, heard: 1 * s},
			{at: 5 * s, heard: 1 * s, ping: true},
			{at: 7500 * time.Millisecond, heard: 1 * s},
			{at: 10 * s, heard: 1 * s, ping: true},
			{at: 12500 * time.Millisecond, heard: 1 * s},
			{at: 15 * s, heard: 1 * s, ping: true},
			{at: 17500 * time.Millisecond, heard: 1 * s, ping: true, unresponsive: true, changed: true},
			{at: 20 * s, heard: 1 * s, unresponsive: true},
		}},
		{"a stalled server judges no holder", []wake{
			{at: 2500 * time.Millisecond, heard: never},
			// The server was stopped for a minute: the answers wait unread.
			{at: 62500 * time.Millisecond, heard: never, ping: true},
			{at: 65 * s, heard: never},
			{at: 67500 * time.Millisecond, heard: 66 * s, ping: true},
		}},
		{"a stall keeps a holder unresponsive until it is heard", []wake{
			{at: 2500 * time.Millisecond, heard: never},
			{at: 5 * s, heard: never, ping: true},
			{at: 7500 * time.Millisecond, heard: never},
			{at: 10 * s, heard: never, ping: true},
			{at: 12500 * time.Millisecond, heard: never},
			{at: 15 * s, heard: never, ping: true},
			{at: 17500 * time.Millisecond, heard: never, ping: true, unresponsive: true, changed: true},
			{at: 77500 * time.Millisecond, heard: never, ping: true, unresponsive: true},
			{at: 80 * s, heard: 79 * s, changed: true},
		}},
		{"a clock that goes backwards", []wake{
			{at: 2500 * time.Millisecond, heard: never},
			{at: -1 * time.Hour, heard: never},
			{at: -1*time.Hour + 2500*time.Millisecond, heard: never},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := New(Config{Interval: 5 * s, Timeout: 10 * s}, t0)
			for i, wk := range tc.wakes {
				heard := time.Time{}
				if wk.heard >= 0 {
					heard = at(wk.heard)
				}
				v := w.Wake(at(wk.at), heard)
				if v.Ping != wk.ping || v.Unresponsive != wk.unresponsive || v.Changed != wk.changed {
					t.Fatalf("wake %d at %s: %+v; want ping %v unresponsive %v changed %v", i, wk.at, v, wk.ping, wk.unresponsive, wk.changed)
				}
				if v.Unresponsive != v.Since.After(time.Time{}) {
					t.Fatalf("wake %d: since %v with unresponsive %v", i, v.Since, v.Unresponsive)
				}
			}
		})
	}
}

// A hostile configuration still makes a loop that sleeps.
func TestWatchHostileConfig(t *testing.T) {
	for _, cfg := range []Config{{}, {Interval: -s, Timeout: -s}, {Interval: time.Nanosecond, Timeout: time.Hour}} {
		w := New(cfg, t0)
		if w.Step() <= 0 {
			t.Errorf("%+v: step %s", cfg, w.Step())
		}
		now := t0
		for range 100 {
			now = now.Add(w.Step())
			w.Wake(now, time.Time{})
		}
		if cfg.Timeout < time.Hour && !w.Unresponsive() {
			t.Errorf("%+v: a holder never heard is not unresponsive after 100 steps", cfg)
		}
	}
}

func TestKill(t *testing.T) {
	grace := 3 * s
	type look struct {
		at                 time.Duration
		ended, unresponive bool
		want               Step
		killed             bool // record the SIGKILL at this look
	}
	for _, tc := range []struct {
		name  string
		asked Asked
		looks []look
		esc   bool
		why   Why
	}{
		{"asked, it ends in time", ByFrame, []look{
			{at: 0, want: Step{Action: Wait, Until: at(grace + Margin)}},
			{at: 2 * s, ended: true, want: Step{Action: Done}},
		}, false, NoReason},
		{"asked, it does not answer", ByFrame, []look{
			{at: 0, want: Step{Action: Wait, Until: at(grace + Margin)}},
			{at: 1 * s, unresponive: true, want: Step{Action: SIGKILL, Why: NotAnswering}, killed: true},
			{at: 2 * s, unresponive: true, want: Step{Action: Wait, Until: at(1*s + KillWait)}},
			{at: 3 * s, ended: true, want: Step{Action: Done}},
		}, true, NotAnswering},
		{"asked by signal, it never ends", BySignal, []look{
			{at: 0, want: Step{Action: Wait, Until: at(grace + Margin)}},
			{at: grace + Margin - 1, want: Step{Action: Wait, Until: at(grace + Margin)}},
			{at: grace + Margin, want: Step{Action: SIGKILL, Why: OverGrace}, killed: true},
			{at: grace + Margin + KillWait - 1, want: Step{Action: Wait, Until: at(grace + Margin + KillWait)}},
			{at: grace + Margin + KillWait, want: Step{Action: GiveUp}},
		}, true, OverGrace},
		{"not asked at all", NotAsked, []look{
			{at: 0, want: Step{Action: SIGKILL, Why: Unreachable}, killed: true},
			{at: 0, ended: true, want: Step{Action: Done}},
		}, true, Unreachable},
		{"ended before the first look", NotAsked, []look{
			{at: 0, ended: true, want: Step{Action: Done}},
		}, false, NoReason},
		{"a clock that goes backwards waits no longer", ByFrame, []look{
			{at: -time.Hour, want: Step{Action: Wait, Until: at(grace + Margin)}},
			{at: grace + Margin, want: Step{Action: SIGKILL, Why: OverGrace}},
		}, false, OverGrace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := NewKill(tc.asked, t0, grace)
			for i, l := range tc.looks {
				got := k.Next(at(l.at), l.ended, l.unresponive)
				if got != l.want {
					t.Fatalf("look %d at %s: %+v, want %+v", i, l.at, got, l.want)
				}
				if l.killed {
					k.Killed(at(l.at))
				}
			}
			if esc, why := k.Escalated(); esc != tc.esc || why != tc.why {
				t.Errorf("escalated %v (%s), want %v (%s)", esc, why, tc.esc, tc.why)
			}
		})
	}
}

// A negative grace is no grace.
func TestKillNegativeGrace(t *testing.T) {
	k := NewKill(ByFrame, t0, -time.Hour)
	if got := k.Next(t0, false, false); got.Until != t0.Add(Margin) {
		t.Errorf("%+v, want a wait of Margin", got)
	}
}
