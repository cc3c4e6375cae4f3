package server

import (
	"testing"
	"time"

	"termkeep/internal/outlog/outlogtest"
)

// ?at= reads an offset, a Unix ms time covering its millisecond, an RFC
// 3339 time, or a duration before now.
func TestParseMoment(t *testing.T) {
	now := time.Date(2025, 11, 21, 4, 40, 0, 0, time.UTC)
	for _, tc := range []struct {
		in     string
		off    uint64
		isTime bool
		at     time.Time
		last   time.Time
	}{
		{in: "0"},
		{in: "123456", off: 123456},
		{in: "t1763700000123", isTime: true, at: time.UnixMilli(1763700000123), last: time.UnixMilli(1763700000124).Add(-1)},
		{in: "2025-11-21T04:39:00.5Z", isTime: true, at: now.Add(-59500 * time.Millisecond), last: now.Add(-59500 * time.Millisecond)},
		{in: "5m", isTime: true, at: now.Add(-5 * time.Minute), last: now.Add(-5 * time.Minute)},
	} {
		b, last, err := parseMoment(tc.in, now)
		if err != nil || b.IsTime != tc.isTime || b.Offset != tc.off || !b.Time.Equal(tc.at) || !last.Equal(tc.last) {
			t.Errorf("parseMoment(%q) = %+v, %v, %v", tc.in, b, last, err)
		}
	}
	for _, bad := range []string{"t", "t12x", "t99999999999999999999", "soon", "-1", ""} {
		if _, _, err := parseMoment(bad, now); err == nil {
			t.Errorf("parseMoment(%q) took it", bad)
		}
	}
}

// A log written while the wall clock was set back 2 h, or forward a year,
// at line 200 of 400: ?at= the time any line was written finds that line
// (the screen after it), after the step too, and a moment the log shows
// is not refused as in the future though the clock now is behind it.
func TestReplayAtSteppedClock(t *testing.T) {
	start := time.Unix(1_760_000_000, 0)
	for _, tc := range outlogtest.Steps {
		t.Run(tc.Name, func(t *testing.T) {
			st, l := outlogtest.OpenStepped(t, start, tc.By)
			// The server's clock: as set at the end of the log.
			now := st.Walls[st.Lines-1]
			rp := &replayer{now: func() time.Time { return now }}
			for _, i := range []int{0, 150, 199, 200, 201, 300, 399} {
				at := st.Times[i].Format(time.RFC3339Nano)
				m, status, err := rp.replayAt(l, at)
				want := st.End
				if i+1 < st.Lines {
					want = st.Offsets[i+1]
				}
				if err != nil || m.off != want {
					t.Errorf("at=%s (line %d): offset %d, %d %v; want %d (after line %d)", at, i, m.off, status, err, want, i)
				}
			}
			if _, status, err := rp.replayAt(l, st.Times[399].Add(time.Hour).Format(time.RFC3339Nano)); err == nil && st.Times[399].Add(time.Hour).After(now) {
				t.Errorf("an hour after the log and the clock: taken (%d)", status)
			}
		})
	}
}
