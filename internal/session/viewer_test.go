package session

import (
	"testing"
	"time"
)

// The pace rule: a viewer behind by more than its queue is reading, not
// slow, while at its own pace it would read what is behind it within
// catchUpWithin.
func TestKeepsPace(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name      string
		lag, read uint64
		d         time.Duration
		want      bool
	}{
		{"stopped", 2 * mb, 0, 250 * time.Millisecond, false},
		{"a second tab, nearly as fast as a 60 MB/s flood", 4 * mb, 14 * mb, 250 * time.Millisecond, true},
		{"catching up after a burst", 8 * mb, 4 * mb, 250 * time.Millisecond, true},
		{"a browser drawing a tenth of a flood", 30 * mb, 1 * mb, 250 * time.Millisecond, false},
		{"at the bound", 8 * mb, 1 * mb, 250 * time.Millisecond, true},
		{"just past it", 8*mb + 1, 1 * mb, 250 * time.Millisecond, false},
		{"a trickle far behind", 64 * mb, 64 << 10, time.Second, false},
	} {
		if got := keepsPace(tc.lag, tc.read, tc.d); got != tc.want {
			t.Errorf("%s: keepsPace(%d, %d, %v) = %v, want %v", tc.name, tc.lag, tc.read, tc.d, got, tc.want)
		}
	}
}
