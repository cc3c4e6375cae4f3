package session

import (
	"time"

	"termkeep/internal/session/sizepolicy"
)

// The host's side of the session's size (package sizepolicy decides): it
// stamps each viewer's activity, gives the policy the viewers as they are,
// and asks the holder for the size it decides.

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

// SetSizePolicy sets how the session's size follows its viewers.
func (h *Host) SetSizePolicy(p sizepolicy.Policy) {
	h.mu.Lock()
	h.policy = p
	h.mu.Unlock()
	h.applySizePolicy()
}

// viewerActive records that v typed, resized or arrived at now, and
// applies the size policy.
func (h *Host) viewerActive(v *viewer, now time.Time) error { return h.applySize(v, now) }

// applySizePolicy applies the size policy to the viewers attached.
func (h *Host) applySizePolicy() error { return h.applySize(nil, time.Time{}) }

// applySize stamps active's activity at now (nil: nobody's), and asks the
// holder for the size the policy gives the viewers attached
// (sizepolicy.Decide), unless it was the last size asked for
// (sizepolicy.Need). One lock covers both, as it is taken at every
// keystroke.
func (h *Host) applySize(active *viewer, now time.Time) error {
	h.mu.Lock()
	if active != nil {
		active.active = now
	}
	want, owner := sizepolicy.Decide(h.policy, h.sizeViewersLocked())
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
		h.sizeViewers = append(h.sizeViewers, sizepolicy.Viewer{ID: v.id, Writable: !v.readOnly, Cols: v.cols, Rows: v.rows, Active: v.active})
	}
	return h.sizeViewers
}
