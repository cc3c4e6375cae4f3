package holder

// setName records the session's name in meta.json: the server sends it
// (a name frame) when the session is renamed, so that a registry rebuilt
// from meta.json (termkeep doctor --rebuild) has the name of now, not the
// one the session started with.
func (h *holder) setName(name string) {
	h.mu.Lock()
	if h.meta.Name == name || h.exited {
		h.mu.Unlock()
		return
	}
	h.meta.Name = name
	h.mu.Unlock()
	go h.saveMeta()
}
