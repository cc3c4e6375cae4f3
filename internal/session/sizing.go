package session

import (
	"context"
	"strings"
	"time"
	"unicode"

	"termkeep/internal/session/sizepolicy"
	"termkeep/internal/wire"
)

// The host's side of the session's size (package sizepolicy decides): it
// records what each viewer did (typed, fit, reported its size), gives the
// policy the viewers as they are, and asks the holder for the size it
// decides.

// sizing is the session's size as the host keeps it: the size the holder
// reported last, the one last asked of it, the policy that decides it and
// the viewer it follows, and the recent changes for viewers. It is
// guarded by Host.mu, as the room is: the policy is applied at every
// keystroke, to the viewers and the size read together.
type sizing struct {
	cols, rows       uint16 // as the holder last reported (its welcome, a resized frame)
	reqCols, reqRows uint16 // the size last asked of the holder (0: none yet)
	policy           sizepolicy.Policy
	fixed            sizepolicy.Size     // the size the Fixed policy keeps (zero: the one the session has)
	owner            int                 // the id of the viewer whose size the session follows (0: none)
	changes          []sizeChange        // the latest size changes, for viewers
	seq              uint64              // the number of the latest size change
	buf              []sizepolicy.Viewer // viewers' buffer
}

// AwaitSize waits until the holder reports the session at cols x rows,
// or ctx ends; it reports whether it is.
func (h *Host) AwaitSize(ctx context.Context, cols, rows uint16) bool {
	for {
		h.mu.Lock()
		ok := h.size.cols == cols && h.size.rows == rows
		changed := h.changed // closed by a resized frame (viewersChangedLocked)
		h.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// SetSizePolicy sets how the session's size follows its viewers, and
// applies it at once.
func (h *Host) SetSizePolicy(p sizepolicy.Policy) error {
	h.mu.Lock()
	changed := h.size.policy != p
	h.size.policy = p
	if changed {
		h.viewersChangedLocked() // viewers are told the policy
	}
	h.mu.Unlock()
	return h.applySizePolicy()
}

// SizePolicy returns the session's size policy.
func (h *Host) SizePolicy() sizepolicy.Policy {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.size.policy
}

// SetFixedSize gives the session cols x rows and keeps it there: the
// policy becomes Fixed (as tmux's resize-window sets window-size manual),
// so no viewer changes it until the policy is set again.
func (h *Host) SetFixedSize(cols, rows uint16) error {
	if err := wire.CheckSize(cols, rows); err != nil {
		return err
	}
	h.mu.Lock()
	if h.size.policy != sizepolicy.Fixed {
		h.viewersChangedLocked()
	}
	h.size.policy, h.size.fixed = sizepolicy.Fixed, sizepolicy.Size{Cols: cols, Rows: rows}
	h.mu.Unlock()
	return h.applySizePolicy()
}

// viewerSize records that v did ev at now (with its size for a report or
// a fit), and applies the size policy.
func (h *Host) viewerSize(v *viewer, ev sizepolicy.Event, cols, rows uint16, now time.Time) error {
	return h.applySize(func() {
		// Typing changes only when the viewer last took the size, which
		// no viewers frame shows (a change of owner is told below): a
		// frame to every viewer per keystroke would wake them all on the
		// echo's path.
		v.sz.Apply(ev, cols, rows, now)
		if ev != sizepolicy.Type {
			h.viewersChangedLocked() // its size or the owner's may show
		}
	})
}

// applySizePolicy applies the size policy to the viewers attached.
func (h *Host) applySizePolicy() error { return h.applySize(nil) }

// applySize runs record (nil: nothing to record) and asks the holder for
// the size the policy gives the viewers attached (sizepolicy.Decide),
// unless it was the last size asked for (sizepolicy.Need). One lock covers
// both, as it is taken at every keystroke.
func (h *Host) applySize(record func()) error {
	h.mu.Lock()
	if record != nil {
		record()
	}
	want, owner := sizepolicy.Decide(h.size.policy, h.size.fixed, h.size.viewers(&h.room))
	if owner != h.size.owner {
		h.size.owner = owner
		h.viewersChangedLocked()
	}
	need := sizepolicy.Need(want, sizepolicy.Size{Cols: h.size.reqCols, Rows: h.size.reqRows}, sizepolicy.Size{Cols: h.size.cols, Rows: h.size.rows})
	exited := h.exit != nil
	h.mu.Unlock()
	if !need || exited {
		return nil
	}
	return h.Resize(want.Cols, want.Rows)
}

// viewers is the room's viewers as the size policy sees them, in a
// buffer that the next call reuses: the policy is applied at every
// keystroke.
func (s *sizing) viewers(r *room) []sizepolicy.Viewer {
	s.buf = s.buf[:0]
	for v := range r.viewers {
		s.buf = append(s.buf, v.sz)
	}
	return s.buf
}

// viewerName is the name a viewer gave in its hello as the others are
// shown it: printable characters only, at most wire.MaxViewerName bytes,
// cut at a character's boundary.
func viewerName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "") {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+len(string(r)) > wire.MaxViewerName {
			break
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// sizeChange is a size the holder reported at an offset, numbered in the
// order they came (seq from 1).
type sizeChange struct {
	off        uint64
	cols, rows uint16
	seq        uint64
}

// recentSizes bounds the size changes the host keeps for its viewers: a
// viewer further behind learns the size from its next snapshot.
const recentSizes = 64

// resized records the size the holder reported at off, for viewers to be
// told in order with the output (nextSize).
func (s *sizing) resized(off uint64, cols, rows uint16) {
	s.cols, s.rows = cols, rows
	s.seq++
	if len(s.changes) == recentSizes {
		s.changes = append(s.changes[:0], s.changes[1:]...)
	}
	s.changes = append(s.changes, sizeChange{off: off, cols: cols, rows: rows, seq: s.seq})
}

// nextSize returns the first size change after seq (the last one a viewer
// was told) at or after off: the viewer at off is to be told it before
// any byte from its offset on.
func (h *Host) nextSize(off, seq uint64) (sizeChange, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.size.next(off, seq)
}

func (s *sizing) next(off, seq uint64) (sizeChange, bool) {
	for _, c := range s.changes {
		if c.seq > seq && c.off >= off {
			return c, true
		}
	}
	return sizeChange{}, false
}
