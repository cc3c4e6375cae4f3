package session

import "termkeep/internal/wire"

// The pty's input mode (wire.TypeTermMode): the holder reports it, the
// host keeps the latest and passes it on to viewers that know the frame,
// for the page's predictive echo.

// setTermMode records the pty's mode (nil: unknown) and wakes the viewers
// when it changed.
func (h *Host) setTermMode(m *wire.TermMode) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.setTermModeLocked(m)
}

func (h *Host) setTermModeLocked(m *wire.TermMode) {
	old := h.reports.mode
	if (old == nil && m == nil) || (old != nil && m != nil && old.Echo == m.Echo && old.Canonical == m.Canonical) {
		return
	}
	h.reports.mode = m
	h.reports.modeVer++
	h.wakeLocked()
}

// sendTermMode tells a viewer of version 7 or later the pty's mode when it
// changed since it was last told. An unknown mode is not sent: a viewer
// that has been told none takes it as unknown, and a known mode becomes
// unknown only when a holder of an older build takes over, which a viewer
// sees as the session's end.
func (v *viewer) sendTermMode() error {
	if v.version < 7 {
		return nil
	}
	h := v.h
	h.mu.Lock()
	if v.sentModeVer == h.reports.modeVer || h.reports.mode == nil {
		h.mu.Unlock()
		return nil
	}
	v.sentModeVer = h.reports.modeVer
	m := *h.reports.mode
	h.mu.Unlock()
	return v.send(func(w *wire.Writer) error { return w.TermMode(m) })
}
