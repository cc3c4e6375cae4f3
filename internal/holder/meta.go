package holder

import "termkeep/internal/sessiondir"

// meta.json: the size, working directory and name the server sends are
// recorded there, where a restore and a rebuilt registry find them.

// resize sets the pty's size, records it in the log at the current end (a
// Resized frame for the server, at that offset) and in meta.json.
func (h *holder) resize(cols, rows uint16) {
	if err := setWinsize(h.ptmx, cols, rows); err != nil {
		h.log.Warn("resize pty", "err", err)
		return
	}
	h.mu.Lock()
	if h.meta.Cols == cols && h.meta.Rows == rows {
		h.mu.Unlock()
		return
	}
	h.meta.Cols, h.meta.Rows = cols, rows
	if err := h.out.SetSize(cols, rows); err != nil {
		h.log.Warn("log size", "err", err)
	}
	h.resizes = append(h.resizes, resizeAt{off: h.out.End(), cols: cols, rows: rows})
	if len(h.resizes) > 64 {
		h.resizes = h.resizes[len(h.resizes)-64:]
	}
	h.mu.Unlock()
	h.poke()
	h.saveMeta()
}

// setCwd records the session's working directory (the server follows it
// from OSC 7 and the child's /proc entry) in meta.json, where a restore
// finds it.
func (h *holder) setCwd(dir string) {
	h.mu.Lock()
	if h.meta.Cwd == dir || h.exited {
		h.mu.Unlock()
		return
	}
	h.meta.Cwd = dir
	h.mu.Unlock()
	go h.saveMeta()
}

// saveMeta writes the current meta.json. Writers are serialized: they share
// the temporary file.
func (h *holder) saveMeta() {
	h.metaMu.Lock()
	defer h.metaMu.Unlock()
	h.mu.Lock()
	meta := h.meta
	h.mu.Unlock()
	if err := sessiondir.WriteMetaThrough(h.spec.Dir, meta, h.disk); err != nil {
		h.log.Warn("write meta", "err", err)
	}
}

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
