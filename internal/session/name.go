package session

import (
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// nameVersion is the protocol version that added the name frame.
const nameVersion = 2

// SetName tells the holder the session's name, which it keeps in
// meta.json so that a registry rebuilt from there (termkeep doctor
// --rebuild) has it. It reports whether the holder was told: not when no
// holder is connected, or when the holder predates the name frame (its
// meta.json says which protocol version wrote it), which is then left with
// the name it started with. The server calls it after a rename and when it
// finds meta.json behind the registry.
func (h *Host) SetName(name string) bool {
	if m, err := sessiondir.ReadMeta(h.dir); err != nil || m.Version < nameVersion || m.EndedAt != nil {
		return false
	}
	h.mu.Lock()
	up := h.up
	h.mu.Unlock()
	if up == nil {
		return false
	}
	return up.send(func(w *wire.Writer) error { return w.Frame(wire.TypeName, []byte(name)) }) == nil
}
