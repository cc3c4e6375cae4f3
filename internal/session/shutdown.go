package session

import (
	"context"
	"errors"

	"termkeep/internal/wire"
)

// errHolderGone: the holder's connection ended before it answered.
var errHolderGone = errors.New("session: the holder's connection ended")

// PrepareShutdown readies the session for the machine's shutdown (on):
// it writes a screen checkpoint and sends the holder a shutdown frame, on
// which the holder syncs its log and records that its coming end is the
// shutdown's. With on false it tells the holder the shutdown was
// cancelled. It returns once the holder has answered, or with an error
// when ctx ends first, no holder is connected, or the holder's version
// predates the frame (it then records an ordinary stop). An ended
// session needs nothing.
func (h *Host) PrepareShutdown(ctx context.Context, on bool) error {
	h.mu.Lock()
	up, m, exit := h.up, h.model, h.exit
	h.mu.Unlock()
	if exit != nil {
		return nil
	}
	if on && m != nil {
		m.checkpoint(true) // the next server starts from it, whatever comes
	}
	if up == nil {
		return ErrDisconnected
	}
	for drained := false; !drained; { // answers to an earlier frame
		select {
		case <-up.prepared:
		default:
			drained = true
		}
	}
	p := []byte{0}
	if on {
		p[0] = 1
	}
	if err := up.frame(wire.TypeShutdown, p); err != nil {
		return err
	}
	for {
		select {
		case v := <-up.prepared:
			if v == on {
				return nil
			}
		case <-up.done:
			return errHolderGone
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
