// Package testclock is a clock that tests move by hand, for the types that
// take their clock as a func() time.Time (a Config's Now). It is safe for
// concurrent use: the code under test reads it from its own goroutines
// while the test moves it.
package testclock

import (
	"sync"
	"time"
)

// Clock reads what the test last set; it moves only by Advance.
type Clock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

// New returns a clock that reads t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's reading.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
