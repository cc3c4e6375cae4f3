package server

import (
	"testing"
	"time"
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
