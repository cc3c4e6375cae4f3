package outlog_test

import (
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/outlog/outlogtest"
)

// A wall clock set back 2 hours, or forward a year, while a session
// prints 400 lines, 100 ms apart: the chunks' times still go forward by
// the true 100 ms a line, their Wall says what the clock read, ClockSteps
// finds the one step where it was made, and every line is found again by
// its time.
func TestSteppedClock(t *testing.T) {
	for _, tc := range outlogtest.Steps {
		t.Run(tc.Name, func(t *testing.T) {
			s, l := outlogtest.OpenStepped(t, time.Unix(1_760_000_000, 0), tc.By)
			var steps []outlog.Chunk
			var cs outlog.ClockSteps
			line := 0
			err := l.Chunks(l.First(), l.End(), func(c outlog.Chunk) error {
				if d, ok := cs.Step(c); ok {
					if d != tc.By {
						t.Errorf("step at %d: %v, want %v", c.Offset, d, tc.By)
					}
					steps = append(steps, c)
				}
				if c.Kind != outlog.ChunkData {
					return nil
				}
				for line+1 < len(s.Offsets) && s.Offsets[line+1] <= c.Offset {
					line++
				}
				if !c.Time.Equal(s.Times[line]) || !c.Wall.Equal(s.Walls[line]) {
					t.Errorf("line %d: time %v wall %v, want %v and %v", line, c.Time, c.Wall, s.Times[line], s.Walls[line])
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(steps) != 1 || steps[0].Offset != s.Offsets[s.StepAt] {
				t.Errorf("steps found at %v, want one at line %d (offset %d)", offsets(steps), s.StepAt, s.Offsets[s.StepAt])
			}
			for i, want := range s.Offsets {
				if off, err := l.OffsetAt(s.Times[i]); err != nil || off != want {
					t.Errorf("OffsetAt(time of line %d) = %d, %v; want %d", i, off, err, want)
				}
			}
		})
	}
}

func offsets(cs []outlog.Chunk) []uint64 {
	var out []uint64
	for _, c := range cs {
		out = append(out, c.Offset)
	}
	return out
}

// A writer that opens the log after the clock was set back (while no
// writer had it) goes on from the last log time logged: its times never
// go back, and the reader sees the step at the reopening.
func TestReopenAfterClockSetBack(t *testing.T) {
	dir := t.TempDir()
	c := &outlogtest.Clock{Wall: time.Unix(1_760_000_000, 0), Mono: 5 * time.Second}
	l, err := outlog.Open(dir, c.Options())
	if err != nil {
		t.Fatal(err)
	}
	l.Append([]byte("before\r\n"))
	c.Advance(10 * time.Second)
	l.Append([]byte("still before\r\n"))
	l.Close()
	last := time.Unix(1_760_000_010, 0)

	// Another process, after a reboot: a monotonic clock that starts again,
	// and a wall clock an hour behind.
	c2 := &outlogtest.Clock{Wall: last.Add(-time.Hour), Mono: time.Second}
	l, err = outlog.Open(dir, c2.Options())
	if err != nil {
		t.Fatal(err)
	}
	at := l.End()
	c2.Advance(3 * time.Second)
	l.Append([]byte("after\r\n"))
	l.Close()

	l, err = outlog.Open(dir, outlog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var cs outlog.ClockSteps
	var prev time.Time
	found := false
	l.Chunks(0, l.End(), func(ch outlog.Chunk) error {
		if ch.Time.Before(prev) {
			t.Errorf("offset %d: time %v goes back from %v", ch.Offset, ch.Time, prev)
		}
		prev = ch.Time
		if d, ok := cs.Step(ch); ok {
			found = true
			if ch.Offset != at || d != -time.Hour {
				t.Errorf("step %v at %d, want -1h at %d", d, ch.Offset, at)
			}
		}
		if ch.Kind == outlog.ChunkData && ch.Offset == at {
			if want := last.Add(3 * time.Second); !ch.Time.Equal(want) {
				t.Errorf("after the reopening: time %v, want %v", ch.Time, want)
			}
		}
		return nil
	})
	if !found {
		t.Error("no step found at the reopening")
	}
}

// ClockSteps judges each chunk against the one before it.
func TestClockSteps(t *testing.T) {
	t0 := time.Unix(1_760_000_000, 0)
	type ch struct{ time, wall time.Duration } // after t0; -1 = zero time
	at := func(d time.Duration) time.Time {
		if d == -1 {
			return time.Time{}
		}
		return t0.Add(d)
	}
	for _, tc := range []struct {
		name   string
		chunks []ch
		want   []time.Duration // a step per chunk, 0 = none
	}{
		{"no step", []ch{{0, 0}, {time.Second, time.Second}, {2 * time.Second, 2 * time.Second}}, []time.Duration{0, 0, 0}},
		{"the first chunk is never a step", []ch{{0, 5 * time.Hour}}, []time.Duration{0}},
		{"set back", []ch{{0, 0}, {time.Second, time.Second - 2*time.Hour}}, []time.Duration{0, -2 * time.Hour}},
		{"set forward, then stays", []ch{{0, 0}, {time.Second, time.Second + time.Minute}, {2 * time.Second, 2*time.Second + time.Minute}}, []time.Duration{0, time.Minute, 0}},
		{"set back and forward again", []ch{{0, 0}, {1, 1 - time.Hour}, {2, 2}}, []time.Duration{0, -time.Hour, time.Hour}},
		{"under a second is not a step", []ch{{0, 0}, {time.Second, time.Second + 999*time.Millisecond}}, []time.Duration{0, 0}},
		{"a second is", []ch{{0, 0}, {time.Second, 2 * time.Second}}, []time.Duration{0, time.Second}},
		{"slewed 0.5 s an hour after: no step", []ch{{0, 0}, {time.Hour, time.Hour + 500*time.Millisecond}}, []time.Duration{0, 0}},
		{"3 s in a day of quiet: a slew", []ch{{0, 0}, {24 * time.Hour, 24*time.Hour + 3*time.Second}}, []time.Duration{0, 0}},
		{"two minutes in a day: a step", []ch{{0, 0}, {24 * time.Hour, 24*time.Hour + 2*time.Minute}}, []time.Duration{0, 2 * time.Minute}},
		{"slow drift is followed, not summed", []ch{{0, 0}, {time.Hour, time.Hour + 900*time.Millisecond}, {2 * time.Hour, 2*time.Hour + 1800*time.Millisecond}}, []time.Duration{0, 0, 0}},
		{"chunks without a time are passed over", []ch{{-1, -1}, {0, 0}, {-1, -1}, {time.Second, time.Second - time.Hour}}, []time.Duration{0, 0, 0, -time.Hour}},
		{"an old log: wall is time, never a step", []ch{{0, 0}, {time.Second, time.Second}}, []time.Duration{0, 0}},
		{"a time without a wall (hostile) is passed over", []ch{{0, 0}, {time.Second, -1}, {2 * time.Second, 2 * time.Second}}, []time.Duration{0, 0, 0}},
		{"the most negative step", []ch{{0, 0}, {time.Second, -(1 << 62)}}, []time.Duration{0, -(1 << 62) - time.Second}},
	} {
		var s outlog.ClockSteps
		for i, c := range tc.chunks {
			d, ok := s.Step(outlog.Chunk{Time: at(c.time), Wall: at(c.wall)})
			if ok != (tc.want[i] != 0) || d != tc.want[i] {
				t.Errorf("%s: chunk %d: Step = %v, %v; want %v", tc.name, i, d, ok, tc.want[i])
			}
		}
	}
}

func TestClockStepLabel(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-2 * time.Hour:                "the clock was set back by 2h0m0s",
		365 * 24 * time.Hour:          "the clock was set forward by 365d",
		24*time.Hour + 90*time.Minute: "the clock was set forward by 1d1h30m0s",
		-1500 * time.Millisecond:      "the clock was set back by 1.5s",
		-(1 << 63):                    "the clock was set back by 106751d23h47m17s",
	} {
		if got := outlog.ClockStepLabel(d); got != want {
			t.Errorf("ClockStepLabel(%v) = %q, want %q", d, got, want)
		}
	}
}
