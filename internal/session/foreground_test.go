package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"termkeep/internal/wire"
)

// A holder older than fg-query is never asked (it would hang up): the
// answer is ErrNoForeground at once. One that takes the question and
// never answers holds the caller no longer than its context.
func TestForegroundOldHolders(t *testing.T) {
	for _, tc := range []struct {
		version int
		want    error
	}{
		{10, ErrNoForeground},
		{wire.Version, context.DeadlineExceeded},
	} {
		dir := t.TempDir()
		fh := startV1Holder(t, dir)
		fh.mu.Lock()
		fh.version, fh.also = tc.version, map[wire.Type]bool{wire.TypeFgQuery: true}
		fh.mu.Unlock()
		h := New(Config{ID: "old", Dir: dir})
		t.Cleanup(h.Close)
		if err := h.Connect(-1); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := h.Foreground(ctx)
		cancel()
		if !errors.Is(err, tc.want) {
			t.Errorf("version %d: Foreground: %v, want %v", tc.version, err, tc.want)
		}
		// Input goes after any question: once it arrives, so has that.
		if err := h.Input([]byte("x")); err != nil {
			t.Fatal(err)
		}
		<-fh.input
		fh.mu.Lock()
		got := fh.got
		fh.mu.Unlock()
		if asked := len(got) > 1; asked != (tc.version >= 11) {
			t.Errorf("version %d: the holder got %v", tc.version, got)
		}
	}
}

// Answers are paired with their questions by id; an answer nobody waits
// for is dropped.
func TestFgAsks(t *testing.T) {
	var a fgAsks
	id1, ch1 := a.ask()
	id2, ch2 := a.ask()
	a.answer(wire.FgState{ID: id2, Kind: wire.FgRunning})
	a.answer(wire.FgState{ID: 99})
	a.drop(id1)
	a.answer(wire.FgState{ID: id1})
	if s := <-ch2; s.Kind != wire.FgRunning {
		t.Errorf("answer %+v", s)
	}
	select {
	case s := <-ch1:
		t.Errorf("a dropped question was answered: %+v", s)
	default:
	}
	if len(a.wait) != 0 {
		t.Errorf("left waiting: %v", a.wait)
	}
}
