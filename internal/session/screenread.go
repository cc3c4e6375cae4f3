package session

// What the rest of the server reads of a session's screen: a snapshot for a
// new viewer, the rendered text, the modes its program set, all once the
// model has caught up with everything received; and the catch-up of an
// ended session's model at a server's start.

import (
	"context"
	"path/filepath"

	"termkeep/internal/replay"
	"termkeep/internal/screen"
	"termkeep/internal/session/catchup"
)

// Snapshot returns a snapshot of the session's screen with up to scrollback
// lines of history, valid at the returned offset, once the model has caught
// up with at least offset min (or ctx ends: at).
func (h *Host) Snapshot(ctx context.Context, min uint64, scrollback int) (data []byte, off uint64, cols, rows uint16, err error) {
	m := h.startModel()
	err = m.at(ctx, min, func(scr *screen.Screen, at uint64) {
		data, off = scr.Snapshot(scrollback), at
		c, r := scr.Size()
		cols, rows = uint16(c), uint16(r)
	})
	return data, off, cols, rows, err
}

// Screen renders the session's screen as text (or with SGR colors, ansi),
// with up to scrollback lines above it, once the model has caught up with
// everything the server has received (or ctx ends: at).
func (h *Host) Screen(ctx context.Context, ansi bool, scrollback int) (string, error) {
	var out string
	err := h.current(ctx, func(scr *screen.Screen) {
		if ansi {
			out = scr.ANSI(scrollback)
		} else {
			out = scr.Text(scrollback)
		}
	})
	return out, err
}

// AltScreen reports whether the session's screen is the alternate one (a
// full-screen program's) once the model has caught up with everything the
// server has received; false when ctx ends first.
func (h *Host) AltScreen(ctx context.Context) bool {
	alt := false
	h.current(ctx, func(scr *screen.Screen) { alt = scr.AltScreen() })
	return alt
}

// Look returns, once the model has caught up with everything the server
// has received, whether the screen is the alternate one, its text and the
// cursor's row: what tells a quiet program waiting for input from one
// still at work (package readiness).
func (h *Host) Look(ctx context.Context) (alt bool, text string, cursorRow int, err error) {
	err = h.current(ctx, func(scr *screen.Screen) {
		alt, text = scr.AltScreen(), scr.Text(0)
		_, cursorRow = scr.CursorPosition()
	})
	return alt, text, cursorRow, err
}

// InputModes returns the modes the session's program has set for its
// input (cursor keys, keypad, bracketed paste), once the model has caught
// up with everything the server has received: what named keys and pastes
// are encoded for.
func (h *Host) InputModes(ctx context.Context) (screen.InputModes, error) {
	var m screen.InputModes
	err := h.current(ctx, func(scr *screen.Screen) { m = scr.InputModes() })
	return m, err
}

// current calls fn with the screen once the model has caught up with
// everything the server has received.
func (h *Host) current(ctx context.Context, fn func(scr *screen.Screen)) error {
	end := h.Info().End
	if e := h.Exit(); e != nil {
		end = max(end, e.End)
	}
	return h.startModel().at(ctx, end, func(scr *screen.Screen, _ uint64) { fn(scr) })
}

// CatchUp readies an ended session's screen for its first request: it
// brings the model up to the end of the log and writes its checkpoint
// there, then lets the model go, so that the request reads the checkpoint
// alone and an ended session nobody reads costs no memory. The server
// calls it at start for the sessions whose model would otherwise replay
// much of the log at that request (catchup.Warm). It returns when that is
// done, or ctx ends, or the host is closed; it does nothing for a session
// that runs (its model follows the output from the start).
func (h *Host) CatchUp(ctx context.Context) {
	if h.Exit() == nil {
		return
	}
	m := h.startModel()
	select {
	case <-m.done:
	case <-ctx.Done():
		return
	case <-h.closer.closed:
		return
	}
	m.mu.Lock()
	saved := m.off == m.ckptOff
	m.mu.Unlock()
	if !saved {
		return // the checkpoint could not be written: keep the screen
	}
	h.mu.Lock()
	if h.model == m {
		h.model = nil
	}
	h.mu.Unlock()
}

// NeedsCatchUp reports whether CatchUp is worth calling for this ended
// session at server start (catchup.Warm): its checkpoint is far behind the
// end of its log, or it has none.
func (h *Host) NeedsCatchUp() bool {
	if h.Exit() == nil {
		return false
	}
	l, err := h.outlog()
	if err != nil || l.Refresh() != nil {
		return false
	}
	off, err := replay.CheckpointOffset(filepath.Join(h.dir, CheckpointFile))
	return catchup.Warm(catchup.Checkpoint{Off: off, OK: err == nil}, l.First(), l.End())
}
