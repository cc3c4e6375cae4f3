package server

import (
	"testing"
	"time"
)

// TestLookSchedule: a few looks after the start, each further apart; then
// a look only when the session's activity changed since the last, at most
// once per lookGap; never a wait of zero or of more than the longest
// step, whatever the clock does.
func TestLookSchedule(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ms := time.Millisecond
	type step struct {
		now, activity time.Duration
		look          bool
		wait          time.Duration // when not looking
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"backoff after the start", []step{
			{0, 0, false, 250 * ms},
			{250 * ms, 0, true, 0},
			{500 * ms, 0, false, 250 * ms},
			{750 * ms, 0, true, 0},
			{1750 * ms, 0, true, 0},
			{3750 * ms, 0, true, 0},
			{7750 * ms, 0, true, 0},
			{15750 * ms, 0, true, 0},
			{31750 * ms, 0, true, 0},
			// Backoff over: nothing happened, nothing to look at.
			{60 * time.Second, 0, false, lookGap},
		}},
		{"late wakeups look once", []step{
			{time.Minute, 0, true, 0},
			{time.Minute, 0, false, 500 * ms},
		}},
		{"activity after the backoff", []step{
			{250 * ms, 0, true, 0}, {750 * ms, 0, true, 0}, {1750 * ms, 0, true, 0}, {3750 * ms, 0, true, 0},
			{7750 * ms, 0, true, 0}, {15750 * ms, 0, true, 0}, {31750 * ms, 0, true, 0},
			// Output at 35 s: looked at once the gap since the last look is over.
			{35 * time.Second, 35 * time.Second, false, 31750*ms + lookGap - 35*time.Second},
			{31750*ms + lookGap, 35 * time.Second, true, 0},
			// The same activity again: no look.
			{time.Minute, 35 * time.Second, false, lookGap},
			// Activity that goes back in time is no change.
			{2 * time.Minute, time.Second, false, lookGap},
			{3 * time.Minute, 3 * time.Minute, true, 0},
		}},
		{"a clock gone backwards", []step{
			{-time.Hour, 0, false, 250 * ms},
			{250 * ms, 0, true, 0},
			{-time.Hour, 0, false, 500 * ms},
		}},
	} {
		l := newLookSchedule(t0)
		for i, s := range tc.steps {
			look, wait := l.next(at(s.now), at(s.activity))
			if look != s.look || (!look && wait != s.wait) {
				t.Errorf("%s, step %d (at %v): look %v, wait %v; want %v, %v", tc.name, i, s.now, look, wait, s.look, s.wait)
			}
			if !look && (wait <= 0 || wait > maxLookWait) {
				t.Errorf("%s, step %d: wait %v out of bounds", tc.name, i, wait)
			}
			if look {
				l.looked(at(s.now), at(s.activity))
			}
		}
	}
}
