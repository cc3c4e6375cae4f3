package server

import (
	"cmp"
	"errors"
	"net/http"

	"termkeep/internal/api"
	"termkeep/internal/session"
	"termkeep/internal/store"
)

// Share links and presence, for the page's Share dialog. A share link is
// a registry token scoped to one session (users.go makes it, principal.go
// keeps it to that session), read-only unless asked otherwise; only the
// owner makes, lists and revokes them, since a link acts as the session's
// owner. Presence lists who watches a session: each viewer's party (the
// owner, a named link, another user, the CLI), size and whether the
// session follows its size.

func (g *gateway) shareRoutes(mux *http.ServeMux) {
	s := g.s
	mux.HandleFunc("GET /api/sessions/{ref}/links", s.withSession(ownerOnlySession(s.handleLinks)))
	mux.HandleFunc("POST /api/sessions/{ref}/links", s.withSession(ownerOnlySession(s.handleLinkCreate)))
	mux.HandleFunc("DELETE /api/sessions/{ref}/links/{id}", s.withSession(ownerOnlySession(s.handleLinkRevoke)))
	mux.HandleFunc("GET /api/sessions/{ref}/viewers", s.withSession(s.handleViewers))
}

type sessionHandler = func(http.ResponseWriter, *http.Request, store.Session, *session.Host)

// ownerOnlySession refuses fn to anyone but the owner: a share link, even
// a writable one, must not make links that outlive its own revocation.
func ownerOnlySession(fn sessionHandler) sessionHandler {
	return func(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
		if !principalOf(r.Context()).owner {
			writeError(w, http.StatusForbidden, "only the owner shares sessions and sees their links")
			return
		}
		fn(w, r, sess, h)
	}
}

// handleLinks is GET /api/sessions/{ref}/links: the session's links that
// still work, oldest first.
func (s *Server) handleLinks(w http.ResponseWriter, r *http.Request, sess store.Session, _ *session.Host) {
	all, err := s.store.Tokens(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	now := s.cfg.Now()
	out := []api.Token{}
	for _, t := range all {
		if t.Session == sess.ID && t.Active(now) {
			out = append(out, s.tokenView(r.Context(), t, now))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleLinkCreate is POST /api/sessions/{ref}/links: a link to this
// session, its secret and address shown this once.
func (s *Server) handleLinkCreate(w http.ResponseWriter, r *http.Request, sess store.Session, _ *session.Host) {
	var req api.ShareRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	out, status, err := s.createToken(r.Context(), api.TokenRequest{
		Name: req.Name, Session: sess.ID, ReadOnly: !req.Writable, ExpiresIn: req.ExpiresIn,
	})
	if err != nil {
		writeError(w, status, "%v", err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

// handleLinkRevoke is DELETE /api/sessions/{ref}/links/{id}: the link stops
// working and its viewers end at once. A token that is not this session's
// link answers as a missing one.
func (s *Server) handleLinkRevoke(w http.ResponseWriter, r *http.Request, sess store.Session, _ *session.Host) {
	id := r.PathValue("id")
	t, err := s.store.Token(r.Context(), id)
	if err == nil && t.Session != sess.ID {
		err = store.ErrTokenNotFound
	}
	if err == nil {
		t, err = s.revokeToken(r.Context(), id)
	}
	if errors.Is(err, store.ErrTokenNotFound) {
		writeError(w, http.StatusNotFound, "session %s has no link %q", ref(sess), id)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, s.tokenView(r.Context(), t, s.cfg.Now()))
}

// handleViewers is GET /api/sessions/{ref}/viewers: who watches the
// session. Anyone who sees the session sees who watches it; only the
// owner is told the names of links and users.
func (s *Server) handleViewers(w http.ResponseWriter, r *http.Request, _ store.Session, h *session.Host) {
	writeJSON(w, http.StatusOK, presence(h.Viewers(), h.Parties(), principalOf(r.Context()).owner))
}

// webParty is who a browser's viewer is: the owner (named by its browser),
// a share link (by its name, else its id), or another user.
func (s *Server) webParty(r *http.Request) session.Party {
	p := principalOf(r.Context())
	switch {
	case p.owner:
		name := "owner"
		if p.browser != "" {
			if c, err := s.store.BrowserCred(r.Context(), p.browser); err == nil && c.Label != "" {
				name = c.Label
			}
		}
		return session.Party{Kind: "owner", Name: name}
	case p.session != "" && p.tokenID != "":
		// The name came with the token's row when the request was let in:
		// a crowd of a link's viewers costs the registry no more reads.
		return session.Party{Kind: "link", Name: cmp.Or(p.tokenName, p.tokenID)}
	}
	return session.Party{Kind: "user", Name: p.user}
}
