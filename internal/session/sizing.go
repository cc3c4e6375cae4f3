package session

import (
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

// waitSize waits until the model runs at cols x rows, or timeout.
func (h *Host) waitSize(cols, rows uint16, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		h.mu.Lock()
		ok := h.cols == cols && h.rows == rows
		h.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SetSizePolicy sets how the session's size follows its viewers, and
// applies it at once.
func (h *Host) SetSizePolicy(p sizepolicy.Policy) error {
	h.mu.Lock()
	changed := h.policy != p
	h.policy = p
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
	return h.policy
}

// SetFixedSize gives the session cols x rows and keeps it there: the
// policy becomes Fixed (as tmux's resize-window sets window-size manual),
// so no viewer changes it until the policy is set again.
func (h *Host) SetFixedSize(cols, rows uint16) error {
	if err := wire.CheckSize(cols, rows); err != nil {
		return err
	}
	h.mu.Lock()
	if h.policy != sizepolicy.Fixed {
		h.viewersChangedLocked()
	}
	h.policy, h.fixed = sizepolicy.Fixed, sizepolicy.Size{Cols: cols, Rows: rows}
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
	want, owner := sizepolicy.Decide(h.policy, h.fixed, h.sizeViewersLocked())
	if owner != h.sizeOwner {
		h.sizeOwner = owner
		h.viewersChangedLocked()
	}
	need := sizepolicy.Need(want, sizepolicy.Size{Cols: h.reqCols, Rows: h.reqRows}, sizepolicy.Size{Cols: h.cols, Rows: h.rows})
	exited := h.exit != nil
	h.mu.Unlock()
	if !need || exited {
		return nil
	}
	return h.Resize(want.Cols, want.Rows)
}

// sizeViewersLocked is the viewers as the size policy sees them, in a
// buffer of the host's that the next call reuses: the policy is applied
// at every keystroke.
func (h *Host) sizeViewersLocked() []sizepolicy.Viewer {
	h.sizeViewers = h.sizeViewers[:0]
	for v := range h.viewers {
		h.sizeViewers = append(h.sizeViewers, v.sz)
	}
	return h.sizeViewers
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

// sizeChangedLocked records a size change at off, for viewers to be told
// in order with the output (nextSize).
func (h *Host) sizeChangedLocked(off uint64, cols, rows uint16) {
	h.sizeSeq++
	if len(h.sizes) == recentSizes {
		h.sizes = append(h.sizes[:0], h.sizes[1:]...)
	}
	h.sizes = append(h.sizes, sizeChange{off: off, cols: cols, rows: rows, seq: h.sizeSeq})
}

// nextSize returns the first size change after seq (the last one a viewer
// was told) at or after off: the viewer at off is to be told it before
// any byte from its offset on.
func (h *Host) nextSize(off, seq uint64) (sizeChange, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.sizes {
		if c.seq > seq && c.off >= off {
			return c, true
		}
	}
	return sizeChange{}, false
}
