package session

import (
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// SetName tells the holder the session's name, which it keeps in
// meta.json so that a registry rebuilt from there (termkeep doctor
// --rebuild) has it. It reports whether the holder was told: not when no
// holder is connected, or when the holder predates the name frame (the
// version it welcomed with), which is then left with the name it started
// with. The server calls it after a rename and when it finds meta.json
// behind the registry.
func (h *Host) SetName(name string) bool {
	if m, err := sessiondir.ReadMeta(h.dir); err != nil || m.EndedAt != nil {
		return false
	}
	h.mu.Lock()
	up := h.up
	h.mu.Unlock()
	if up == nil {
		return false
	}
	return up.frame(wire.TypeName, []byte(name)) == nil
}
