package remote

import (
	"testing"
	"time"
)

func TestRedial(t *testing.T) {
	const s, ms = time.Second, time.Millisecond
	for _, c := range []struct {
		name        string
		first, most time.Duration
		// took is how long each attempt ran before it failed; wait the
		// wait after each.
		took, wait []time.Duration
	}{
		{"refused at once: the pace doubles to its most", 250 * ms, 5 * s,
			[]time.Duration{0, 0, 0, 0, 0, 0, 0},
			[]time.Duration{250 * ms, 500 * ms, s, 2 * s, 4 * s, 5 * s, 5 * s}},
		{"a silent link's ssh that times out is followed at once", 250 * ms, 5 * s,
			[]time.Duration{10 * s, 10 * s, 10 * s, 10 * s, 10 * s, 10 * s},
			[]time.Duration{0, 0, 0, 0, 0, 0}},
		{"the time an attempt took counts toward its wait", 250 * ms, 5 * s,
			[]time.Duration{100 * ms, 100 * ms, 3 * s, 3 * s, 3 * s},
			[]time.Duration{150 * ms, 400 * ms, 0, 0, s}},
		{"a link silent for a while, then refusing: the pace went on", 250 * ms, 5 * s,
			[]time.Duration{10 * s, 10 * s, 10 * s, 10 * s, 10 * s, 0, 0},
			[]time.Duration{0, 0, 0, 0, 0, 5 * s, 5 * s}},
		{"an attempt that ended before it began waits the whole pace", 250 * ms, 5 * s,
			[]time.Duration{-time.Hour, -ms},
			[]time.Duration{250 * ms, 500 * ms}},
		{"an attempt that ran for ever", 250 * ms, 5 * s,
			[]time.Duration{1<<63 - 1},
			[]time.Duration{0}},
		{"no first pace: the least", 0, 0,
			[]time.Duration{0, 0, 0},
			[]time.Duration{ms, ms, ms}},
		{"a negative first, a most below it", -s, -2 * s,
			[]time.Duration{0, 0},
			[]time.Duration{ms, ms}},
		{"a most below first: first throughout", 2 * s, s,
			[]time.Duration{0, 0, s},
			[]time.Duration{2 * s, 2 * s, s}},
		{"a huge most does not overflow", time.Hour, 1<<63 - 1,
			[]time.Duration{0, 0, 0},
			[]time.Duration{time.Hour, 2 * time.Hour, 4 * time.Hour}},
		{"a pace past half the largest does not overflow", 1 << 62, 1<<63 - 1,
			[]time.Duration{0, 0, 0},
			[]time.Duration{1 << 62, 1<<63 - 1, 1<<63 - 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewRedial(c.first, c.most)
			at := time.Unix(1e9, 0)
			for i, took := range c.took {
				if got := r.Failed(at, at.Add(took)); got != c.wait[i] {
					t.Errorf("attempt %d, failed after %s: wait %s, want %s", i+1, took, got, c.wait[i])
				}
				at = at.Add(time.Minute)
			}
		})
	}
}

// Attempts never start closer together than the pace they were given,
// and never wait longer than most, whatever each took.
func FuzzRedial(f *testing.F) {
	f.Add(int64(250), int64(5000), []byte{0, 0, 100, 0, 255})
	f.Add(int64(0), int64(-1), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, firstMs, mostMs int64, took []byte) {
		first, most := time.Duration(firstMs%1e6)*time.Millisecond, time.Duration(mostMs%1e6)*time.Millisecond
		r := NewRedial(first, most)
		at := time.Unix(1e9, 0)
		for _, b := range took {
			pace := r.pace
			ran := time.Duration(b) * 40 * time.Millisecond
			wait := r.Failed(at, at.Add(ran))
			if wait < 0 || wait > max(most, first, minPace) {
				t.Fatalf("wait %s outside 0..%s", wait, max(most, first, minPace))
			}
			if ran+wait < pace {
				t.Fatalf("the next attempt starts %s after the last, under the pace %s", ran+wait, pace)
			}
			at = at.Add(ran + wait)
		}
	})
}
