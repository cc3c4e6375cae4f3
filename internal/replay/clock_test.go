package replay

import (
	"strconv"
	"testing"
	"time"

	"termkeep/internal/outlog/outlogtest"
)

// 400 lines 100 ms apart, the wall clock set back 2 h or forward a year
// at line 200: the timeline has a point at every line, at the time it was
// truly written (so a player finds every line by its time and spaces them
// 100 ms apart), lasts 39.9 s, and marks the step where it was made.
func TestTimelineSteppedClock(t *testing.T) {
	for _, tc := range outlogtest.Steps {
		t.Run(tc.Name, func(t *testing.T) {
			s, l := outlogtest.OpenStepped(t, time.Unix(1_760_000_000, 0), tc.By)
			var ix Index
			tl, err := ix.Timeline(l)
			if err != nil {
				t.Fatal(err)
			}
			if d := tl.Last.Sub(tl.Start); d != 39900*time.Millisecond {
				t.Errorf("the timeline lasts %v, want 39.9s", d)
			}
			at := map[uint64]time.Time{}
			for _, p := range tl.Points {
				at[p.Offset] = p.Time
			}
			missing := 0
			for i, off := range s.Offsets {
				if got, ok := at[off]; !ok || !got.Equal(s.Times[i]) {
					missing++
					if missing <= 3 {
						t.Errorf("line %d (offset %d): point %v %v, want at %v", i, off, got, ok, s.Times[i])
					}
				}
			}
			if missing > 0 {
				t.Errorf("%d of %d lines have no point at their time (%d points)", missing, s.Lines, len(tl.Points))
			}
			want := "clock@" + itoa(s.Offsets[s.StepAt]) + " \"" + tc.Label + "\"\n"
			if got := kinds(tl.Markers); got != want {
				t.Errorf("markers:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
