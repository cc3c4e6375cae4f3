package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/session"
	"termkeep/internal/session/sizepolicy"
	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// handleSize is POST …/sessions/{ref}/size, on both listeners (termkeep
// resize): a size gives the session that size and keeps it there (the
// policy becomes fixed, as tmux's resize-window makes window-size
// manual); a size_policy alone switches the policy, live. The policy is
// recorded in the registry; a fixed size is the one the session has, so a
// restarted server keeps it without a record of its own.
func (s *Server) handleSize(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	var req api.SizeRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	sized := req.Cols != 0 || req.Rows != 0
	if sized && wire.CheckSize(req.Cols, req.Rows) != nil {
		writeError(w, http.StatusBadRequest, "size %dx%d is not a terminal size (1..%d each)", req.Cols, req.Rows, wire.MaxDim)
		return
	}
	policy, err := sizepolicy.Parse(req.SizePolicy)
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	case !sized && req.SizePolicy == "":
		writeError(w, http.StatusBadRequest, "give a size (cols and rows), a size_policy, or both")
		return
	case sized && req.SizePolicy != "" && policy != sizepolicy.Fixed:
		writeError(w, http.StatusBadRequest, "a size is kept only by the fixed policy, not %s: leave size_policy out or make it fixed", policy)
		return
	}
	if sized {
		policy = sizepolicy.Fixed
	}
	if e := h.Exit(); e != nil {
		writeError(w, http.StatusConflict, "%s", endedMessage(sess, e))
		return
	}
	if sized {
		err = h.SetFixedSize(req.Cols, req.Rows)
	} else {
		err = h.SetSizePolicy(policy)
	}
	if err != nil {
		if errors.Is(err, session.ErrEnded) {
			writeError(w, http.StatusConflict, "%s", endedMessage(sess, h.Exit()))
			return
		}
		writeError(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	if err := s.store.SetSizePolicy(r.Context(), sess.ID, string(policy)); err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	if sized {
		// Answer with the size in force, as the holder confirms it.
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		h.AwaitSize(ctx, req.Cols, req.Rows)
	}
	got, err := s.store.Session(r.Context(), sess.ID)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, s.view(got, h))
}
