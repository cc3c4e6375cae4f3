package session

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"termkeep/internal/wire"
)

// ErrNoForeground: the session's holder predates fg-query (protocol
// 11): what its foreground does is not known, and never will be from it.
var ErrNoForeground = errors.New("session: the session's holder cannot say what its foreground does")

// fgAsks pairs the holder's fg-state answers with the Foreground calls
// waiting for them. mu guards next and wait.
type fgAsks struct {
	mu   sync.Mutex
	next uint64
	wait map[uint64]chan wire.FgState
}

// ask registers a new query and returns its id and where its answer
// comes.
func (a *fgAsks) ask() (uint64, chan wire.FgState) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	if a.wait == nil {
		a.wait = make(map[uint64]chan wire.FgState)
	}
	ch := make(chan wire.FgState, 1)
	a.wait[a.next] = ch
	return a.next, ch
}

// drop forgets query id (answered, or given up on).
func (a *fgAsks) drop(id uint64) {
	a.mu.Lock()
	delete(a.wait, id)
	a.mu.Unlock()
}

// answer hands s to the call waiting for it; an answer nobody waits for
// (its call gave up) is dropped.
func (a *fgAsks) answer(s wire.FgState) {
	a.mu.Lock()
	ch := a.wait[s.ID]
	delete(a.wait, s.ID)
	a.mu.Unlock()
	if ch != nil {
		ch <- s
	}
}

// Foreground asks the holder what the pty's foreground process group is
// doing, as the kernel says it: the process reading the terminal, one
// waiting on events, or one at work, and what is typed and unread. It
// returns when the holder answers, or with an error when ctx ends first,
// no holder is connected (ErrDisconnected), the session has ended
// (ErrEnded), or the holder is older than the question
// (ErrNoForeground). Kind is wire.FgUnknown where the holder cannot tell
// (not Linux).
func (h *Host) Foreground(ctx context.Context) (wire.FgState, error) {
	h.mu.Lock()
	up, exit := h.up, h.exit
	h.mu.Unlock()
	switch {
	case exit != nil:
		return wire.FgState{}, ErrEnded
	case up == nil:
		return wire.FgState{}, ErrDisconnected
	case !wire.HolderAccepts(up.version, wire.TypeFgQuery):
		return wire.FgState{}, ErrNoForeground
	}
	id, ch := up.fg.ask()
	defer up.fg.drop(id)
	if err := up.send(func(w *wire.Writer) error { return w.FgQuery(id) }); err != nil {
		return wire.FgState{}, fmt.Errorf("session: ask the holder about its foreground: %w", err)
	}
	select {
	case s := <-ch:
		return s, nil
	case <-up.done:
		return wire.FgState{}, errHolderGone
	case <-ctx.Done():
		return wire.FgState{}, ctx.Err()
	}
}
