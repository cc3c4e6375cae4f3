package flow

import (
	"errors"
	"math"
	"testing"

	"termkeep/internal/wire"
)

// Where a viewer saying hello starts, the log holding [first, end).
func TestResume(t *testing.T) {
	viewer := func(from int64) wire.Hello { return wire.Hello{Role: wire.RoleViewer, From: from} }
	waiter := func(from int64) wire.Hello { return wire.Hello{Role: wire.RoleWaiter, From: from} }
	for _, tc := range []struct {
		name       string
		hello      wire.Hello
		first, end uint64
		want       Start
		beyond     bool
		snap, live bool
	}{
		{"live only", viewer(wire.FromEnd), 100, 500, Start{From: 500, Resume: wire.ResumeLive}, false, false, true},
		{"a fresh viewer", viewer(wire.FromSnapshot), 100, 500, Start{From: 500, Resume: wire.ResumeSnapshot}, false, true, true},
		{"from an offset the log holds", viewer(200), 100, 500, Start{From: 200, Resume: wire.ResumeBytes}, false, false, false},
		{"from the log's first byte", viewer(100), 100, 500, Start{From: 100, Resume: wire.ResumeBytes}, false, false, false},
		{"from the end", viewer(500), 100, 500, Start{From: 500, Resume: wire.ResumeBytes}, false, false, false},
		{"from an offset retention trimmed", viewer(50), 100, 500, Start{From: 50, Resume: wire.ResumeSnapshot}, false, true, true},
		{"a waiter from a trimmed offset is told of the gap", waiter(50), 100, 500, Start{From: 50, Resume: wire.ResumeBytes, Gap: true}, false, false, false},
		{"a waiter from an offset the log holds", waiter(300), 100, 500, Start{From: 300, Resume: wire.ResumeBytes}, false, false, false},
		{"from the future", viewer(501), 100, 500, Start{}, true, false, false},
		{"a waiter from the future", waiter(1 << 40), 100, 500, Start{}, true, false, false},
		{"offset 0 of an empty log", viewer(0), 0, 0, Start{From: 0, Resume: wire.ResumeBytes}, false, false, false},
		{"a fresh viewer of an empty log", viewer(wire.FromSnapshot), 0, 0, Start{From: 0, Resume: wire.ResumeSnapshot}, false, true, true},
		{"hostile: the largest offset", viewer(math.MaxInt64), 0, 10, Start{}, true, false, false},
		{"hostile: a negative offset is live", viewer(-7), 0, 10, Start{From: 10, Resume: wire.ResumeLive}, false, false, true},
		{"hostile: the smallest offset is live", viewer(math.MinInt64), 0, 10, Start{From: 10, Resume: wire.ResumeLive}, false, false, true},
		{"hostile: an unknown role is a viewer", wire.Hello{Role: "root", From: 5}, 10, 20, Start{From: 5, Resume: wire.ResumeSnapshot}, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resume(tc.hello, tc.first, tc.end)
			var be *BeyondEndError
			if tc.beyond {
				if !errors.As(err, &be) || be.End != tc.end || be.From != uint64(tc.hello.From) {
					t.Fatalf("Resume = %+v, %v; want a BeyondEndError", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Resume = %+v, %v; want %+v", got, err, tc.want)
			}
			if got.Snapshot() != tc.snap || got.Live() != tc.live {
				t.Fatalf("snapshot %v live %v, want %v %v", got.Snapshot(), got.Live(), tc.snap, tc.live)
			}
		})
	}
}

// The error a viewer from the future gets says what it asked and where
// the session is.
func TestBeyondEndMessage(t *testing.T) {
	_, err := Resume(wire.Hello{Role: wire.RoleViewer, From: 900}, 0, 512)
	if err == nil || err.Error() != "offset 900 is beyond the session's end (512)" {
		t.Fatalf("err = %v", err)
	}
}
