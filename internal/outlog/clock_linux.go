package outlog

import (
	"time"

	"golang.org/x/sys/unix"
)

// bootClock reads CLOCK_BOOTTIME: monotonic, and counting the time the
// machine was suspended, so that a laptop's closed lid is not taken for a
// wall clock set forward. Read once per Time record, not per append.
func bootClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return processClock()
	}
	return time.Duration(ts.Nano())
}
