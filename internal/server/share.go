package server

import (
	"cmp"
	"net/http"

	"termkeep/internal/session"
	"termkeep/internal/store"
)

// Share links and presence, for the page's Share dialog. A share link is
// a registry token scoped to one session (tokens.go makes it, principal.go
// keeps it to that session), read-only unless asked otherwise; only the
// owner makes, lists and revokes them, since a link acts as the session's
// owner. Presence lists who watches a session: each viewer's party (the
// owner, a named link, another user, the CLI), size and whether the
// session follows its size.

func (g *gateway) shareRoutes(mux *http.ServeMux) {
	s := g.s
	mux.HandleFunc("GET /api/sessions/{ref}/links", s.withSession(ownerOnlySession(s.tokens.handleLinks)))
	mux.HandleFunc("POST /api/sessions/{ref}/links", s.withSession(ownerOnlySession(s.tokens.handleLinkCreate)))
	mux.HandleFunc("DELETE /api/sessions/{ref}/links/{id}", s.withSession(ownerOnlySession(s.tokens.handleLinkRevoke)))
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
