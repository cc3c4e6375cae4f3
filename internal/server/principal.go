package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/store"
)

// Who a request acts as. The unix socket is the owner's (peerCheckListener
// lets only the server's uid in). On the TCP listener the guard decides:
// the owner token is the owner, and a registry token (users.go) is its
// user, narrowed to what the token allows. Handlers ask principalOf and
// never look at tokens.
//
// A session a principal does not see answers exactly as one that does not
// exist, so a token learns nothing about other users' sessions from the
// answers (session names are global, though: creating or renaming to a
// name another user holds is a conflict).

// principal is who a request acts as.
type principal struct {
	// owner sees and may do everything: the owner token, the unix socket.
	owner bool
	// user owns the sessions it creates and, unless owner, sees only its
	// own. "" is no one: such a principal sees nothing and creates nothing.
	user string
	// tokenID is the registry token that let the request in ("" for the
	// owner), tokenName its name (else its id); session and workspace
	// narrow what it sees ("" = no limit).
	tokenID   string
	tokenName string
	session   string
	workspace string
	// readOnly principals watch: their viewers are read-only and every
	// state-changing call is refused.
	readOnly bool
	// expires is when the token stops letting requests in (nil = never).
	expires *time.Time
	// browser is the browser credential that let the request in ("" for
	// a token); it acts as the token it was made from (browser.go).
	browser string
}

type principalKey struct{}

func withPrincipal(ctx context.Context, p principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// principalOf returns who ctx's request acts as; a context that carries
// none is no one, so a handler reached by a path that skipped the
// authentication sees nothing.
func principalOf(ctx context.Context) principal {
	p, _ := ctx.Value(principalKey{}).(principal)
	return p
}

func ownerPrincipal() principal { return principal{owner: true, user: currentUser()} }

// asOwner serves the unix socket's requests as the owner.
func asOwner(next http.Handler) http.Handler {
	p := ownerPrincipal()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(withPrincipal(r.Context(), p)))
	})
}

// sees reports whether p may see sess at all.
func (p principal) sees(sess store.Session) bool {
	if p.owner {
		return true
	}
	return p.user != "" && sess.Owner == p.user &&
		(p.session == "" || sess.ID == p.session) &&
		(p.workspace == "" || sess.Workspace == p.workspace)
}

// scopeCreate checks that p may create the session req asks for, and puts
// a workspace-scoped principal's session in its workspace. It returns the
// status to answer when it may not.
func (p principal) scopeCreate(req *api.CreateRequest) (int, error) {
	switch {
	case p.user == "":
		return http.StatusForbidden, errors.New("this request acts as no user and cannot create sessions")
	case p.readOnly:
		return http.StatusForbidden, errors.New("this access token is read-only: it can watch sessions, not create them")
	case p.session != "":
		return http.StatusForbidden, errors.New("this access token reaches one session only and cannot create sessions")
	case p.workspace != "" && req.Workspace == "":
		req.Workspace = p.workspace
	case p.workspace != "" && req.Workspace != p.workspace:
		return http.StatusForbidden, fmt.Errorf("this access token reaches workspace %s only; create the session there", p.workspace)
	}
	return 0, nil
}

// handleMe is GET /api/me: who the request acts as and what it may do, so
// a page offers only what works (no New session button for a share link).
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r.Context())
	_, err := p.scopeCreate(&api.CreateRequest{})
	writeJSON(w, http.StatusOK, api.Me{
		User: p.user, Owner: p.owner, ReadOnly: p.readOnly, Session: p.session, Workspace: p.workspace,
		CanCreate: err == nil,
	})
}

// authenticate returns who the secret tok stands for: the owner when it is
// the owner token (compared in constant time), else the active browser
// credential's or registry token's principal. A revoked, expired or
// unknown secret is no one; ended says which of the first two it is.
func (g *guard) authenticate(ctx context.Context, tok string) (p principal, ok bool, ended string) {
	if g.match(tok) {
		return g.owner, true, ""
	}
	if tok == "" {
		return principal{}, false, ""
	}
	if strings.HasPrefix(tok, browserSecretPrefix) && g.lookupBrowser != nil {
		if p, ok, ended := g.lookupBrowser(ctx, tok); ok || ended != "" {
			return p, ok, ended
		}
	}
	if g.lookup == nil {
		return principal{}, false, ""
	}
	return g.lookup(ctx, tok)
}

// serveAs hands r to next acting as p. A registry token's or browser
// credential's requests end when it expires or is revoked: WebSocket
// viewers and event streams included, not only the requests that come
// after.
func (g *guard) serveAs(w http.ResponseWriter, r *http.Request, p principal, next http.Handler) {
	ctx := withPrincipal(r.Context(), p)
	if (p.tokenID != "" || p.browser != "") && g.conns != nil {
		var cancel context.CancelFunc
		if p.expires != nil {
			ctx, cancel = context.WithDeadline(ctx, *p.expires)
		} else {
			ctx, cancel = context.WithCancel(ctx)
		}
		defer cancel()
		if p.tokenID != "" {
			defer g.conns.track(p.tokenID, cancel)()
		}
		if p.browser != "" {
			defer g.conns.track(browserConnKey(p.browser), cancel)()
		}
	}
	if !p.owner {
		w = pathHider{ResponseWriter: w, paths: g.paths}
	}
	next.ServeHTTP(w, r.WithContext(ctx))
}

// lookupToken is the guard's way into the registry: the principal of an
// active token with secret, and when it was last used is recorded (at most
// once a minute, so a busy browser does not write the registry on every
// request). Neither the secret nor its hash is ever logged.
func (s *Server) lookupToken(ctx context.Context, secret string) (p principal, ok bool, ended string) {
	t, err := s.store.TokenBySecret(ctx, secret)
	if err != nil {
		if !errors.Is(err, store.ErrTokenNotFound) && ctx.Err() == nil {
			s.log.Warn("look up an access token", "err", err)
		}
		return principal{}, false, ""
	}
	now := s.cfg.Now()
	if !t.Active(now) {
		return principal{}, false, tokenEnded(t)
	}
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) >= time.Minute {
		if err := s.store.TouchToken(ctx, t.ID); err != nil && ctx.Err() == nil {
			s.log.Warn("record an access token's use", "token", t.ID, "err", err)
		}
	}
	return tokenPrincipal(t), true, ""
}

// tokenEnded is why an inactive token is refused: revoked, else expired.
func tokenEnded(t store.Token) string {
	if t.RevokedAt != nil {
		return api.CodeRevoked
	}
	return api.CodeExpired
}

// tokenConns tracks the requests in flight per registry token, so revoking
// a token ends them. The zero value is ready to use.
type tokenConns struct {
	mu sync.Mutex // guards m
	m  map[string]map[*context.CancelFunc]struct{}
}

// track registers cancel under token id and returns the function that
// forgets it.
func (c *tokenConns) track(id string, cancel context.CancelFunc) (forget func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]map[*context.CancelFunc]struct{})
	}
	if c.m[id] == nil {
		c.m[id] = make(map[*context.CancelFunc]struct{})
	}
	key := &cancel
	c.m[id][key] = struct{}{}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.m[id], key)
		if len(c.m[id]) == 0 {
			delete(c.m, id)
		}
	}
}

// cut ends every request in flight of token id.
func (c *tokenConns) cut(id string) {
	c.mu.Lock()
	var cancels []context.CancelFunc
	for k := range c.m[id] {
		cancels = append(cancels, *k)
	}
	c.mu.Unlock()
	for _, cancel := range cancels {
		cancel()
	}
}

// eventFilter returns which events ctx's principal may read: nil for the
// owner (all of them); for a user, the events of the sessions it sees. An
// event about no session (a workspace's) is the owner's only. A session is
// looked up once per stream; one removed before the stream saw it stays
// hidden, since who owned it is gone with it.
func (s *Server) eventFilter(ctx context.Context) func(store.Event) bool {
	p := principalOf(ctx)
	if p.owner {
		return nil
	}
	seen := map[string]bool{}
	return func(e store.Event) bool {
		if e.Session == "" {
			return false
		}
		v, ok := seen[e.Session]
		if !ok {
			sess, err := s.store.Session(ctx, e.Session)
			v = err == nil && p.sees(sess)
			seen[e.Session] = v
		}
		return v
	}
}

// handleWorkspaces is GET /api/workspaces: the owner gets every workspace;
// a user the workspaces of the sessions it sees (and its token's), counted
// over those sessions only.
func (g *gateway) handleWorkspaces(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r.Context())
	if p.owner {
		g.s.handleWorkspaces(w, r)
		return
	}
	ctx := r.Context()
	all, err := g.s.store.Workspaces(ctx)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	sessions, err := g.s.store.Sessions(ctx)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	type count struct{ sessions, running int }
	counts := map[string]*count{}
	for _, sess := range sessions {
		if sess.Workspace == "" || !p.sees(sess) {
			continue
		}
		c := counts[sess.Workspace]
		if c == nil {
			c = &count{}
			counts[sess.Workspace] = c
		}
		c.sessions++
		if sess.State == store.StateRunning {
			c.running++
		}
	}
	out := []api.Workspace{}
	for _, ws := range all {
		c := counts[ws.Name]
		if c == nil && (p.workspace != ws.Name || p.user == "") {
			continue
		}
		v := api.Workspace{Name: ws.Name, Dir: ws.Dir, Paused: ws.Paused, AutoRestore: ws.AutoRestore, CreatedAt: ws.CreatedAt}
		if c != nil {
			v.Sessions, v.Running = c.sessions, c.running
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, out)
}

// tokenPrincipal is who a registry token acts as: its user, narrowed to its
// scope, until it expires.
func tokenPrincipal(t store.Token) principal {
	return principal{
		user: t.User, tokenID: t.ID, tokenName: cmp.Or(t.Name, t.ID), session: t.Session, workspace: t.Workspace,
		readOnly: t.ReadOnly, expires: t.ExpiresAt,
	}
}
