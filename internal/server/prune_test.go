package server

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"termkeep/internal/store"
)

func TestChoosePrune(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	c := func(id string, st store.State, ended int, bytes int64) pruneCandidate {
		return pruneCandidate{ID: id, State: st, EndedAt: at(ended), Bytes: bytes}
	}
	const (
		ex  = store.StateExited
		cl  = store.StateClosed
		in  = store.StateInterrupted
		pa  = store.StatePaused
		run = store.StateRunning
	)
	many := func(n int, st store.State) []pruneCandidate {
		var out []pruneCandidate
		for i := range n {
			out = append(out, c(fmt.Sprintf("s%03d", i), st, n-i, 1))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		all  []pruneCandidate
		lim  pruneLimits
		want []pruneChoice
	}{{
		name: "within both bounds", lim: pruneLimits{Count: 2, Bytes: 100},
		all: []pruneCandidate{c("a", ex, 1, 50), c("b", cl, 2, 50)},
	}, {
		name: "over the count: the oldest ended go, whatever order they come in", lim: pruneLimits{Count: 2},
		all:  []pruneCandidate{c("new", ex, 9, 1), c("old", cl, 1, 1), c("mid", ex, 5, 1), c("older", ex, 0, 1)},
		want: []pruneChoice{{"older", pruneCount}, {"old", pruneCount}},
	}, {
		name: "over the bytes", lim: pruneLimits{Count: 10, Bytes: 100},
		all:  []pruneCandidate{c("a", ex, 1, 60), c("b", ex, 2, 30), c("c", ex, 3, 30)},
		want: []pruneChoice{{"a", pruneBytes}},
	}, {
		name: "the count first, then the bytes", lim: pruneLimits{Count: 2, Bytes: 10},
		all:  []pruneCandidate{c("a", ex, 1, 1), c("b", ex, 2, 20), c("c", ex, 3, 5), c("d", ex, 4, 5)},
		want: []pruneChoice{{"a", pruneCount}, {"b", pruneCount}},
	}, {
		name: "all interrupted, paused or running: nothing is pruned or counted", lim: pruneLimits{Count: 1, Bytes: 1},
		all: []pruneCandidate{c("i1", in, 1, 1<<40), c("i2", in, 2, 1<<40), c("p", pa, 0, 1<<40), c("r", run, 0, 1<<40)},
	}, {
		name: "interrupted and paused are neither pruned nor counted among ended", lim: pruneLimits{Count: 1, Bytes: 100},
		all:  []pruneCandidate{c("i", in, 0, 1000), c("p", pa, 0, 1000), c("a", ex, 1, 1), c("b", ex, 2, 1)},
		want: []pruneChoice{{"a", pruneCount}},
	}, {
		name: "one huge log, the newest: it goes too, the bound is the bound", lim: pruneLimits{Count: 10, Bytes: 100},
		all:  []pruneCandidate{c("a", ex, 1, 10), c("huge", ex, 2, 1<<50)},
		want: []pruneChoice{{"a", pruneBytes}, {"huge", pruneBytes}},
	}, {
		name: "one huge old log: only it goes", lim: pruneLimits{Count: 10, Bytes: 100},
		all:  []pruneCandidate{c("huge", ex, 1, 1<<50), c("b", ex, 2, 10), c("c", cl, 3, 10)},
		want: []pruneChoice{{"huge", pruneBytes}},
	}, {
		name: "sizes that overflow a sum saturate", lim: pruneLimits{Bytes: math.MaxInt64 - 1},
		all:  []pruneCandidate{c("a", ex, 1, math.MaxInt64), c("b", ex, 2, math.MaxInt64), c("c", ex, 3, 5)},
		want: []pruneChoice{{"a", pruneBytes}, {"b", pruneBytes}},
	}, {
		name: "ties in end time: by id", lim: pruneLimits{Count: 1},
		all:  []pruneCandidate{c("z", ex, 1, 1), c("b", ex, 1, 1), c("m", cl, 1, 1)},
		want: []pruneChoice{{"b", pruneCount}, {"m", pruneCount}},
	}, {
		name: "an unknown end time is the oldest", lim: pruneLimits{Count: 1},
		all:  []pruneCandidate{c("a", ex, 1, 1), {ID: "nil", State: ex}},
		want: []pruneChoice{{"nil", pruneCount}},
	}, {
		name: "negative sizes count as none", lim: pruneLimits{Bytes: 10},
		all: []pruneCandidate{c("a", ex, 1, -1<<40), c("b", ex, 2, 10)},
	}, {
		name: "no bounds", lim: pruneLimits{Count: 0, Bytes: -1},
		all: many(1000, ex),
	}, {
		name: "a thousand over a bound of 998", lim: pruneLimits{Count: 998},
		all:  many(1000, cl),
		want: []pruneChoice{{"s999", pruneCount}, {"s998", pruneCount}},
	}, {
		name: "nothing", lim: pruneLimits{Count: 1, Bytes: 1},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.all)
			got := choosePrune(tc.all, tc.lim)
			if !slices.Equal(got, tc.want) {
				t.Errorf("choosePrune = %v, want %v", got, tc.want)
			}
			if !slices.Equal(in, tc.all) {
				t.Errorf("choosePrune changed its input")
			}
			// The same list in another order decides the same.
			slices.Reverse(tc.all)
			if again := choosePrune(tc.all, tc.lim); !slices.Equal(again, got) {
				t.Errorf("reversed input: %v, want %v", again, got)
			}
		})
	}
}

// A pass removes the chosen sessions' rows and directories with a
// session.pruned event each, but not one that was restored between the
// choice and its removal (a session may end, or come back, while a pass
// runs).
func TestPrunePass(t *testing.T) {
	var sessions []store.Session
	for i, id := range []string{"old", "mid", "new"} {
		s := endedSession(id, id)
		ended := time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC)
		s.EndedAt = &ended
		sessions = append(sessions, s)
	}
	intr := endedSession("intr", "intr")
	intr.State, intr.ExitCode = store.StateInterrupted, nil
	ts := newTestServer(t, "", append(sessions, intr)...)
	ctx := context.Background()
	st := ts.srv.store
	lim := pruneLimits{Count: 1}
	choices := choosePrune([]pruneCandidate{{ID: "old", State: store.StateExited}, {ID: "mid", State: store.StateExited, EndedAt: time.Unix(1, 0)}, {ID: "new", State: store.StateExited, EndedAt: time.Unix(2, 0)}}, lim)
	if len(choices) != 2 || choices[0].ID != "old" {
		t.Fatalf("choices %v", choices)
	}
	// "old" is restored after it was chosen.
	if err := st.Restart(ctx, "old", 0, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range choices {
		ts.srv.pruneOne(ctx, c, lim)
	}
	for id, kept := range map[string]bool{"old": true, "mid": false, "new": true, "intr": true} {
		_, err := st.Session(ctx, id)
		_, serr := os.Stat(ts.dir.Session(id))
		if kept != (err == nil) || kept != (serr == nil) {
			t.Errorf("session %s: registry %v, directory %v; want kept=%v", id, err, serr, kept)
		}
	}
	evs, err := st.Events(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var pruned []string
	for _, e := range evs {
		if e.Kind == store.EventSessionPruned {
			pruned = append(pruned, e.Session+" "+string(e.Detail))
		}
	}
	if len(pruned) != 1 || !strings.HasPrefix(pruned[0], `mid {`) || !strings.Contains(pruned[0], `"reason":"count"`) {
		t.Errorf("session.pruned events %q, want one for mid with its reason", pruned)
	}

	// A whole pass: with a bound of 1 and "new" the only ended one left,
	// nothing goes; the interrupted one never does.
	if _, err := st.End(ctx, "old", store.StateClosed, nil, ""); err != nil {
		t.Fatal(err)
	}
	ts.srv.prunePass(ctx, nil, pruneLimits{Count: 1, Bytes: 1 << 40})
	if _, err := st.Session(ctx, "new"); err == nil {
		t.Errorf("new was kept though old ended after it")
	}
	for _, id := range []string{"old", "intr"} {
		if _, err := st.Session(ctx, id); err != nil {
			t.Errorf("session %s: %v", id, err)
		}
	}
}
