//go:build !linux

package outlog

import "time"

// bootClock is the process's monotonic clock where no boot clock is read.
func bootClock() time.Duration { return processClock() }
