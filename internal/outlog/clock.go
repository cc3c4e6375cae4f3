package outlog

import (
	"fmt"
	"math"
	"time"
)

var processStart = time.Now()

// processClock is the time since the process started, by Go's monotonic
// clock.
func processClock() time.Duration { return time.Since(processStart) }

// MinClockStep is the least change of the wall clock against the log time
// that ClockSteps reports: smaller ones are a clock being slewed, or the
// two readings of one Time record taken a moment apart.
const MinClockStep = time.Second

// ClockSteps finds where the wall clock was set back or forward while a
// log was written, from the chunks of a walk in order: the wall clock then
// moved apart from the log time. It is a value with no I/O: the zero value
// is ready.
type ClockSteps struct {
	known bool
	skew  time.Duration // Wall - Time of the last chunk
	at    time.Time     // its Time
}

// Step takes the next chunk of a walk and returns by how much the wall
// clock was set (negative: back) since the chunk before, if it was.
// Between chunks far apart a drift of up to a thousandth of the time
// between them is a slewed clock, not a step. Chunks without times, and
// those of logs written before the log time existed (their wall clock is
// their log time), have none.
func (s *ClockSteps) Step(c Chunk) (time.Duration, bool) {
	if c.Time.IsZero() || c.Wall.IsZero() {
		return 0, false
	}
	skew := c.Wall.Sub(c.Time)
	prev, at, known := s.skew, s.at, s.known
	s.known, s.skew, s.at = true, skew, c.Time
	if !known {
		return 0, false
	}
	d := skew - prev
	if abs(d) < max(MinClockStep, c.Time.Sub(at)/1000) {
		return 0, false
	}
	return d, true
}

func abs(d time.Duration) time.Duration {
	if d == math.MinInt64 {
		return math.MaxInt64
	}
	if d < 0 {
		return -d
	}
	return d
}

// ClockStepLabel says in words how the wall clock was set: "the clock was
// set back by 2h0m0s", "the clock was set forward by 365d".
func ClockStepLabel(d time.Duration) string {
	dir := "forward"
	if d < 0 {
		dir = "back"
	}
	return fmt.Sprintf("the clock was set %s by %s", dir, days(abs(d)))
}

// days writes d as time.Duration does, with whole days first.
func days(d time.Duration) string {
	const day = 24 * time.Hour
	if d < day {
		return d.Round(time.Millisecond).String()
	}
	s := fmt.Sprintf("%dd", d/day)
	if r := (d % day).Round(time.Second); r > 0 {
		s += r.String()
	}
	return s
}
