package session

// Party is who a viewer is, as the server names it to the others: its
// kind (the server's words: "owner", "link", "user", "cli") and a name (a
// share link's, a browser's). The host keeps it and never reads it.
type Party struct {
	Kind, Name string
}

// Parties returns the Party of each attached viewer by its id, the ids
// of Viewers frames (Host.Viewers). A viewer that arrives or leaves
// between the two calls is simply missing from one of them.
func (h *Host) Parties() map[int]Party {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[int]Party, len(h.room.viewers))
	for v := range h.room.viewers {
		out[v.id] = v.opts.Party
	}
	return out
}
