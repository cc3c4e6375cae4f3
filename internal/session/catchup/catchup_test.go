package catchup

import (
	"math"
	"testing"
)

// Where a model starts, the log holding [first, end).
func TestOrigin(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ckpt       Checkpoint
		first, end uint64
		from       uint64
		fromCkpt   bool
	}{
		{"no checkpoint: the oldest byte kept", Checkpoint{}, 100, 500, 100, false},
		{"a checkpoint inside the log", Checkpoint{300, true}, 100, 500, 300, true},
		{"a checkpoint at the end: nothing to replay", Checkpoint{500, true}, 100, 500, 500, true},
		{"a checkpoint at the first byte", Checkpoint{100, true}, 100, 500, 100, true},
		{"a checkpoint retention passed", Checkpoint{99, true}, 100, 500, 100, false},
		{"a checkpoint past the log's end", Checkpoint{501, true}, 100, 500, 100, false},
		{"an unreadable checkpoint's offset is not used", Checkpoint{300, false}, 100, 500, 100, false},
		{"an empty log", Checkpoint{}, 0, 0, 0, false},
		{"an empty log with a checkpoint at 0", Checkpoint{0, true}, 0, 0, 0, true},
		{"hostile: the largest offset", Checkpoint{math.MaxUint64, true}, 0, 10, 0, false},
		{"hostile: first past end", Checkpoint{}, 10, 5, 5, false},
		{"hostile: first past end, checkpoint between", Checkpoint{7, true}, 10, 5, 5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, fromCkpt := Origin(tc.ckpt, tc.first, tc.end)
			if from != tc.from || fromCkpt != tc.fromCkpt {
				t.Fatalf("Origin(%+v, %d, %d) = %d, %v; want %d, %v", tc.ckpt, tc.first, tc.end, from, fromCkpt, tc.from, tc.fromCkpt)
			}
			if from > tc.end {
				t.Fatalf("starts at %d, past the end %d", from, tc.end)
			}
		})
	}
}

// Which ended sessions a starting server catches up before anyone asks.
func TestWarm(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name       string
		ckpt       Checkpoint
		first, end uint64
		want       bool
	}{
		{"ended under a server: checkpoint at the end", Checkpoint{64 * mib, true}, 0, 64 * mib, false},
		{"ended with no server: a few bytes behind", Checkpoint{64*mib - 100, true}, 0, 64 * mib, false},
		{"exactly WarmAbove behind", Checkpoint{64*mib - WarmAbove, true}, 0, 64 * mib, false},
		{"a byte more than WarmAbove behind", Checkpoint{64*mib - WarmAbove - 1, true}, 0, 64 * mib, true},
		{"no checkpoint, 64 MiB of log", Checkpoint{}, 0, 64 * mib, true},
		{"no checkpoint, a short log", Checkpoint{}, 0, 4096, false},
		{"no checkpoint, retention kept the last 64 MiB", Checkpoint{}, 200 * mib, 264 * mib, true},
		{"a checkpoint retention passed", Checkpoint{10 * mib, true}, 20 * mib, 84 * mib, true},
		{"a checkpoint past a log cut short", Checkpoint{90 * mib, true}, 0, 64 * mib, true},
		{"an empty log", Checkpoint{}, 0, 0, false},
		{"hostile: first past end", Checkpoint{}, 10 * mib, 0, false},
		{"hostile: the largest offsets", Checkpoint{math.MaxUint64, true}, 0, math.MaxUint64, false},
		{"hostile: the whole offset space to replay", Checkpoint{}, 0, math.MaxUint64, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Warm(tc.ckpt, tc.first, tc.end); got != tc.want {
				t.Fatalf("Warm(%+v, %d, %d) = %v, want %v", tc.ckpt, tc.first, tc.end, got, tc.want)
			}
		})
	}
}

// What a model does when the log has nothing at its offset.
func TestNext(t *testing.T) {
	wait := Step{Wait: true}
	skip := func(to uint64) Step { return Step{SkipTo: to} }
	for _, tc := range []struct {
		name string
		s    AtLogEnd
		want Step
	}{
		{"running: the log is a refresh behind its holder",
			AtLogEnd{Off: 100, End: 200, LogEnd: 100}, wait},
		{"running: the log has the bytes after all",
			AtLogEnd{Off: 100, End: 200, LogEnd: 150}, wait},
		{"running, log stopped before the model: skip to the window",
			AtLogEnd{Off: 100, End: 200, LogEnd: 100, LogStopped: true, StoppedAt: 100, WindowFirst: 150, WindowEnd: 200}, skip(150)},
		{"running, log stopped after the model's offset: the log will have them",
			AtLogEnd{Off: 100, End: 200, LogEnd: 100, LogStopped: true, StoppedAt: 120, WindowFirst: 150, WindowEnd: 200}, wait},
		{"running, log stopped, empty window: nothing to skip to",
			AtLogEnd{Off: 100, End: 200, LogEnd: 100, LogStopped: true, StoppedAt: 100, WindowFirst: 200, WindowEnd: 200}, wait},
		{"running, log stopped, the window holds the offset: read it there",
			AtLogEnd{Off: 100, End: 200, LogEnd: 100, LogStopped: true, StoppedAt: 90, WindowFirst: 100, WindowEnd: 200}, wait},
		{"ended: the holder's last bytes were never logged",
			AtLogEnd{Off: 100, End: 200, LogEnd: 100, Ended: true}, skip(200)},
		{"ended after a full disk: the window holds the end",
			AtLogEnd{Off: 100, End: 200, LogEnd: 100, Ended: true, LogStopped: true, StoppedAt: 100, WindowFirst: 150, WindowEnd: 200}, skip(150)},
		{"ended: a window of other bytes does not count",
			AtLogEnd{Off: 100, End: 200, LogEnd: 100, Ended: true, WindowFirst: 20, WindowEnd: 60}, skip(200)},
		{"ended: the log has the bytes after all",
			AtLogEnd{Off: 100, End: 200, LogEnd: 200, Ended: true}, wait},
		{"ended at the model's offset: nothing to skip",
			AtLogEnd{Off: 200, End: 200, LogEnd: 200, Ended: true}, wait},
		{"hostile: the model past the end",
			AtLogEnd{Off: 300, End: 200, LogEnd: 100, Ended: true}, wait},
		{"hostile: a window past the end",
			AtLogEnd{Off: 100, End: 200, LogEnd: 100, Ended: true, WindowFirst: 250, WindowEnd: 300}, skip(200)},
		{"hostile: running, log stopped, a window past the end",
			AtLogEnd{Off: 100, End: 128, LogEnd: 100, LogStopped: true, StoppedAt: 100, WindowFirst: 150, WindowEnd: 200}, wait},
		{"hostile: an inverted window",
			AtLogEnd{Off: 100, End: 200, LogEnd: 100, LogStopped: true, WindowFirst: 180, WindowEnd: 150}, wait},
		{"hostile: the largest end, ended",
			AtLogEnd{Off: 0, End: math.MaxUint64, Ended: true}, skip(math.MaxUint64)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Next(tc.s)
			if got != tc.want {
				t.Fatalf("Next(%+v) = %+v, want %+v", tc.s, got, tc.want)
			}
			if !got.Wait && (got.SkipTo <= tc.s.Off || got.SkipTo > tc.s.End) {
				t.Fatalf("skips to %d: not past the model's %d and within the end %d", got.SkipTo, tc.s.Off, tc.s.End)
			}
		})
	}
}

// Whatever the host reports, Next either waits or skips forward within
// the output: never back, never past its end, never in place.
func FuzzNext(f *testing.F) {
	f.Add(uint64(100), uint64(200), uint64(100), true, false, uint64(0), uint64(150), uint64(200))
	f.Add(uint64(100), uint64(200), uint64(100), false, true, uint64(100), uint64(150), uint64(200))
	f.Add(uint64(0), uint64(math.MaxUint64), uint64(0), true, true, uint64(0), uint64(math.MaxUint64), uint64(0))
	f.Fuzz(func(t *testing.T, off, end, logEnd uint64, ended, stopped bool, stoppedAt, wf, we uint64) {
		s := AtLogEnd{Off: off, End: end, LogEnd: logEnd, Ended: ended, LogStopped: stopped, StoppedAt: stoppedAt, WindowFirst: wf, WindowEnd: we}
		got := Next(s)
		if got.Wait {
			if got.SkipTo != 0 {
				t.Fatalf("Next(%+v) = %+v: waits and skips", s, got)
			}
			return
		}
		if got.SkipTo <= off || got.SkipTo > end {
			t.Fatalf("Next(%+v) skips to %d", s, got.SkipTo)
		}
		if !ended && !stopped {
			t.Fatalf("Next(%+v) skips bytes of a running session whose log goes on", s)
		}
	})
}
