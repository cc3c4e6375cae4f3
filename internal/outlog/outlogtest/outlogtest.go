// Package outlogtest writes output logs for tests of their readers: real
// logs on disk, written by outlog with a clock the test controls.
package outlogtest

import (
	"fmt"
	"testing"
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

// Step is a way the wall clock is set while a log is written, and how
// readers say it.
type Step struct {
	Name  string
	By    time.Duration
	Label string // outlog.ClockStepLabel's
}

// Steps are the clock steps readers are tested with: 2 hours back, a year
// forward.
var Steps = []Step{
	{"back 2h", -2 * time.Hour, "the clock was set back by 2h0m0s"},
	{"forward 1y", 365 * 24 * time.Hour, "the clock was set forward by 365d"},
}

// OpenStepped writes 400 lines 100 ms apart from start, the wall clock set
// by step just before line 200, into a new directory, and opens the log
// read-only until the test ends.
func OpenStepped(t testing.TB, start time.Time, step time.Duration) (*Stepped, *outlog.Log) {
	t.Helper()
	dir := t.TempDir()
	s := &Stepped{Start: start, Lines: 400, Every: 100 * time.Millisecond, StepAt: 200, Step: step}
	if err := WriteStepped(dir, s); err != nil {
		t.Fatal(err)
	}
	l, err := outlog.Open(dir, outlog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return s, l
}
