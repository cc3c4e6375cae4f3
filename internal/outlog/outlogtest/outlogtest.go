// Package outlogtest writes output logs for tests of their readers: real
// logs on disk, written by outlog with a clock the test controls.
package outlogtest

import (
	"fmt"
	"time"

	"termkeep/internal/outlog"
)

// Clock is a wall clock and a monotonic clock that tests move by hand:
// Advance moves both, Set moves the wall clock alone (an administrator or
// NTP stepping it). Not safe for concurrent use.
type Clock struct {
	Wall time.Time
	Mono time.Duration
}

func (c *Clock) Now() time.Time           { return c.Wall }
func (c *Clock) Monotonic() time.Duration { return c.Mono }
func (c *Clock) Advance(d time.Duration)  { c.Wall, c.Mono = c.Wall.Add(d), c.Mono+d }
func (c *Clock) Set(d time.Duration)      { c.Wall = c.Wall.Add(d) }

// Options are outlog options that read c.
func (c *Clock) Options() outlog.Options {
	return outlog.Options{Now: c.Now, Mono: c.Monotonic}
}

// Stepped is a log of lines written one every Every, with the wall clock
// set by Step just before line StepAt.
type Stepped struct {
	Start   time.Time     // the wall clock's reading at the first line
	Lines   int           // "line 000\r\n" and so on
	Every   time.Duration // between lines, by the monotonic clock
	StepAt  int
	Step    time.Duration
	Offsets []uint64    // of each line's first byte
	Times   []time.Time // when each line was written, truly: Start + i*Every
	Walls   []time.Time // what the wall clock read then
	End     uint64
}

// WriteStepped writes s's lines into a new log in dir, a Time record
// before each (TimeEvery is below Every), and fills in what it wrote.
func WriteStepped(dir string, s *Stepped) error {
	c := &Clock{Wall: s.Start, Mono: time.Hour}
	opts := c.Options()
	opts.TimeEvery = s.Every / 2
	l, err := outlog.Open(dir, opts)
	if err != nil {
		return err
	}
	s.Offsets, s.Times, s.Walls = s.Offsets[:0], s.Times[:0], s.Walls[:0]
	for i := range s.Lines {
		if i == s.StepAt {
			c.Set(s.Step)
		}
		off, err := l.Append(fmt.Appendf(nil, "line %03d\r\n", i))
		if err != nil {
			l.Close()
			return err
		}
		s.Offsets = append(s.Offsets, off)
		s.Times = append(s.Times, s.Start.Add(time.Duration(i)*s.Every))
		s.Walls = append(s.Walls, c.Wall)
		c.Advance(s.Every)
	}
	s.End = l.End()
	return l.Close()
}
