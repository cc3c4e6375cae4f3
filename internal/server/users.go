package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"termkeep/internal/api"
	"termkeep/internal/store"
)

// Users and their tokens are managed on the unix socket only, that is by
// the owner: /v1/users and /v1/tokens. A token's secret is made here, shown
// once in the answer to its creation, and never stored or logged: the
// registry keeps its SHA-256.

// maxTokenLife bounds --expires, far beyond any use, so the arithmetic
// cannot overflow.
const maxTokenLife = 100 * 365 * 24 * time.Hour

func (s *Server) accessRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/users", ownerOnly(s.handleUsers))
	mux.HandleFunc("POST /v1/users", ownerOnly(s.handleUserAdd))
	mux.HandleFunc("DELETE /v1/users/{name}", ownerOnly(s.handleUserRemove))
	mux.HandleFunc("GET /v1/tokens", ownerOnly(s.handleTokens))
	mux.HandleFunc("POST /v1/tokens", ownerOnly(s.handleTokenCreate))
	mux.HandleFunc("DELETE /v1/tokens/{id}", ownerOnly(s.handleTokenRevoke))
	mux.HandleFunc("GET /v1/browser-sessions", ownerOnly(s.handleBrowserSessions)) // browser.go
	mux.HandleFunc("DELETE /v1/browser-sessions/{id}", ownerOnly(s.handleBrowserRevoke))
}

// ownerOnly refuses fn to anyone but the owner. The routes are the unix
// socket's, whose requests all act as the owner; this keeps them so if one
// is ever mounted elsewhere.
func ownerOnly(fn http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !principalOf(r.Context()).owner {
			writeError(w, http.StatusForbidden, "only the owner manages users and tokens (with the termkeep command, on the machine that runs the server)")
			return
		}
		fn(w, r)
	}
}

func checkUserName(name string) error {
	if !api.NameRE.MatchString(name) {
		return fmt.Errorf("user name %q is not allowed: use 1-64 letters, digits, '.', '_', '-', '@' or '+', starting with a letter or digit", name)
	}
	return nil
}

// userExists reports whether name is the owner or a registered user.
func (s *Server) userExists(ctx context.Context, name string) (bool, error) {
	if name == currentUser() {
		return true, nil
	}
	_, err := s.store.User(ctx, name)
	if errors.Is(err, store.ErrUserNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (s *Server) handleUsers(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	users, err := s.store.Users(ctx)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	tokens, err := s.store.Tokens(ctx)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	now := s.cfg.Now()
	active := map[string]int{}
	for _, t := range tokens {
		if t.Active(now) {
			active[t.User]++
		}
	}
	owner := currentUser()
	out := []api.User{{Name: owner, Owner: true, Tokens: active[owner]}}
	for _, u := range users {
		if u.Name == owner {
			continue
		}
		at := u.CreatedAt
		out = append(out, api.User{Name: u.Name, CreatedAt: &at, Tokens: active[u.Name]})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleUserAdd(w http.ResponseWriter, r *http.Request) {
	var req api.UserRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if err := checkUserName(req.Name); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if req.Name == currentUser() {
		writeError(w, http.StatusConflict, "%s is the owner, a user already (the OS user running the server)", req.Name)
		return
	}
	err := s.store.CreateUser(r.Context(), req.Name)
	if errors.Is(err, store.ErrUserExists) {
		writeError(w, http.StatusConflict, "user %s already exists (see `termkeep user ls`)", req.Name)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	u, err := s.store.User(r.Context(), req.Name)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.log.Info("user added", "user", u.Name)
	s.events.emit(store.EventUserAdded, "", map[string]any{"user": u.Name})
	writeJSON(w, http.StatusCreated, api.User{Name: u.Name, CreatedAt: &u.CreatedAt})
}

// handleUserRemove is DELETE /v1/users/{name}[?force=1]. The user's tokens
// are revoked with it, in one registry transaction, and their requests in
// flight end (viewers, event streams), as `token revoke` does. A user who
// owns running sessions is refused unless force, which closes them once
// the tokens are revoked, so none can start another meanwhile. Its ended
// sessions stay listed, the owner's to read and remove.
func (s *Server) handleUserRemove(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := r.PathValue("name")
	force := r.URL.Query().Get("force") != ""
	if name == currentUser() {
		writeError(w, http.StatusConflict, "%s is the owner (the OS user running the server) and cannot be removed", name)
		return
	}
	if checkUserName(name) != nil {
		writeError(w, http.StatusNotFound, "no user %q (see `termkeep user ls`)", name)
		return
	}
	revoked, err := s.store.RemoveUser(ctx, name, force)
	switch {
	case errors.Is(err, store.ErrUserNotFound):
		writeError(w, http.StatusNotFound, "no user %q (see `termkeep user ls`)", name)
		return
	case errors.Is(err, store.ErrUserBusy):
		running, lerr := s.runningOf(ctx, name)
		if lerr != nil {
			writeError(w, http.StatusInternalServerError, "%v", lerr)
			return
		}
		refs := make([]string, len(running))
		for i, sess := range running {
			refs[i] = ref(sess)
		}
		them := "them"
		if len(running) == 1 {
			them = "it"
		}
		writeError(w, http.StatusConflict, "user %s owns %s (%s): end %s with `termkeep kill SESSION`, "+
			"or remove the user with `termkeep user rm %s --force`, which closes %s",
			name, plural(len(running), "running session"), strings.Join(refs, ", "), them, name, them)
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	if s.gw != nil {
		for _, id := range revoked {
			s.gw.conns.cut(id)
		}
	}
	out := api.UserRemoved{Name: name, TokensRevoked: revoked, SessionsClosed: []string{}}
	var killErr error
	if force {
		out.SessionsClosed, killErr = s.closeSessionsOf(ctx, name)
	}
	s.log.Info("user removed", "user", name, "tokens_revoked", revoked, "sessions_closed", out.SessionsClosed)
	s.events.emit(store.EventUserRemoved, "", map[string]any{
		"user": name, "tokens": out.TokensRevoked, "sessions": out.SessionsClosed,
	})
	if killErr != nil {
		writeError(w, http.StatusGatewayTimeout, "user %s is removed and its tokens revoked, but %v", name, killErr)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// runningOf returns the running sessions of user, oldest first.
func (s *Server) runningOf(ctx context.Context, user string) ([]store.Session, error) {
	all, err := s.store.SessionsInState(ctx, store.StateRunning)
	if err != nil {
		return nil, err
	}
	var out []store.Session
	for _, sess := range all {
		if sess.Owner == user {
			out = append(out, sess)
		}
	}
	return out, nil
}

// closeSessionsOf ends every running session of user as kill does, all at
// once, and returns the ids of those that ended, sorted, and a sentence
// about one that did not.
func (s *Server) closeSessionsOf(ctx context.Context, user string) (closed []string, err error) {
	running, err := s.runningOf(ctx, user)
	if err != nil {
		return []string{}, err
	}
	var (
		wg sync.WaitGroup
		mu sync.Mutex // guards closed and err
	)
	closed = []string{}
	for _, sess := range running {
		h := s.host(sess.ID)
		if h == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			kerr := s.kill(h)
			mu.Lock()
			defer mu.Unlock()
			if kerr == nil {
				closed = append(closed, sess.ID)
			} else if err == nil {
				err = fmt.Errorf("%w; `termkeep kill %s` tries again", kerr, ref(sess))
			}
		}()
	}
	wg.Wait()
	slices.Sort(closed)
	return closed, err
}

// plural is "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func (s *Server) tokenView(ctx context.Context, t store.Token, now time.Time) api.Token {
	out := api.Token{
		ID: t.ID, Name: t.Name, User: t.User, Session: t.Session, Workspace: t.Workspace, ReadOnly: t.ReadOnly,
		ExpiresAt: t.ExpiresAt, CreatedAt: t.CreatedAt, LastUsedAt: t.LastUsedAt, RevokedAt: t.RevokedAt,
	}
	out.State = credState(t.RevokedAt, t.Active(now))
	if t.Session != "" {
		if sess, err := s.store.Session(ctx, t.Session); err == nil {
			out.SessionName = sess.Name
		}
	}
	return out
}

func (s *Server) handleTokens(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.Tokens(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	now := s.cfg.Now()
	out := make([]api.Token, 0, len(list))
	for _, t := range list {
		out = append(out, s.tokenView(r.Context(), t, now))
	}
	writeJSON(w, http.StatusOK, out)
}

// handleTokenCreate makes a token (createToken).
func (s *Server) handleTokenCreate(w http.ResponseWriter, r *http.Request) {
	var req api.TokenRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	out, status, err := s.createToken(r.Context(), req)
	if err != nil {
		writeError(w, status, "%v", err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

// createToken makes the token req asks for, or says why not and the
// status to answer. A session-scoped token reaches the session by id, so
// it follows the session through renames; its user is the session's
// owner unless given, and must be.
func (s *Server) createToken(ctx context.Context, req api.TokenRequest) (api.TokenCreated, int, error) {
	var none api.TokenCreated
	if err := checkTokenLabel(req.Name); err != nil {
		return none, http.StatusBadRequest, err
	}
	if req.Session != "" && req.Workspace != "" {
		return none, http.StatusBadRequest, errors.New("a token reaches one session or one workspace, not both: give --session or --workspace")
	}
	if req.ExpiresIn < 0 || time.Duration(req.ExpiresIn) > maxTokenLife/time.Second {
		return none, http.StatusBadRequest, fmt.Errorf("expires_in %d is not a lifetime in seconds (0 = never, at most %d)", req.ExpiresIn, int64(maxTokenLife/time.Second))
	}
	t := store.Token{ID: newID(), Name: req.Name, User: req.User, Workspace: req.Workspace, ReadOnly: req.ReadOnly}
	if req.Session != "" {
		sess, err := s.store.Resolve(ctx, req.Session)
		if errors.Is(err, store.ErrNotFound) {
			return none, http.StatusNotFound, fmt.Errorf("no session %q (see `termkeep ls`)", req.Session)
		}
		if err != nil {
			return none, http.StatusInternalServerError, err
		}
		if t.User == "" {
			t.User = sess.Owner
		}
		if sess.Owner != t.User {
			return none, http.StatusBadRequest, fmt.Errorf("session %s belongs to %s, so a token of %s cannot reach it; leave out --user to make one of %s",
				ref(sess), sess.Owner, t.User, sess.Owner)
		}
		t.Session = sess.ID
	}
	if t.User == "" {
		t.User = currentUser()
	}
	if ok, err := s.userExists(ctx, t.User); err != nil {
		return none, http.StatusInternalServerError, err
	} else if !ok {
		return none, http.StatusNotFound, fmt.Errorf("no user %q: add one with `termkeep user add %s`", t.User, t.User)
	}
	if t.Workspace != "" {
		if _, err := s.store.Workspace(ctx, t.Workspace); errors.Is(err, store.ErrWorkspaceNotFound) {
			return none, http.StatusNotFound, fmt.Errorf("no workspace %q (see `termkeep workspace ls`)", t.Workspace)
		} else if err != nil {
			return none, http.StatusInternalServerError, err
		}
	}
	now := s.cfg.Now()
	if req.ExpiresIn > 0 {
		exp := now.Add(time.Duration(req.ExpiresIn) * time.Second)
		t.ExpiresAt = &exp
	}
	t.CreatedAt = now
	secret, err := newSecret()
	if err != nil {
		return none, http.StatusInternalServerError, err
	}
	got, err := s.store.CreateToken(ctx, t, secret)
	if err != nil {
		return none, http.StatusInternalServerError, err
	}
	s.log.Info("access token created", "token", got.ID, "user", got.User, "session", got.Session,
		"workspace", got.Workspace, "read_only", got.ReadOnly)
	detail := map[string]any{"token": got.ID, "user": got.User, "name": got.Name, "session": got.Session,
		"workspace": got.Workspace, "read_only": got.ReadOnly, "expires_at": got.ExpiresAt}
	s.events.emit(store.EventTokenCreated, "", detail)
	out := api.TokenCreated{Token: s.tokenView(ctx, got, now), Secret: secret}
	if !got.ReadOnly {
		out.Warning = api.WritableWarning
	}
	if s.gw != nil {
		out.URL = BrowserLink(s.gw.url, secret)
	}
	return out, 0, nil
}

// handleTokenRevoke revokes a token (revokeToken).
func (s *Server) handleTokenRevoke(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	t, err := s.revokeToken(r.Context(), id)
	if errors.Is(err, store.ErrTokenNotFound) {
		writeError(w, http.StatusNotFound, "no token %q (see `termkeep token ls`)", id)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, s.tokenView(r.Context(), t, s.cfg.Now()))
}

// revokeToken revokes token id and ends its requests in flight: its
// viewers are disconnected and its event streams end. Revoking a revoked
// token changes nothing and records no event. It returns the token as it
// is now (store.ErrTokenNotFound when there is none).
func (s *Server) revokeToken(ctx context.Context, id string) (store.Token, error) {
	was, err := s.store.Token(ctx, id)
	if err == nil {
		err = s.store.RevokeToken(ctx, id)
	}
	if err != nil {
		return store.Token{}, err
	}
	if s.gw != nil {
		s.gw.conns.cut(id)
	}
	t, err := s.store.Token(ctx, id)
	if err != nil {
		return store.Token{}, err
	}
	if was.RevokedAt == nil {
		s.log.Info("access token revoked", "token", id, "user", t.User)
		s.events.emit(store.EventTokenRevoked, "", map[string]any{"token": id, "user": t.User, "name": t.Name})
	}
	return t, nil
}

// credState is how a token or a browser credential is shown: revoked,
// else active or expired.
func credState(revokedAt *time.Time, active bool) string {
	switch {
	case revokedAt != nil:
		return api.TokenRevoked
	case !active:
		return api.TokenExpired
	}
	return api.TokenActive
}

func checkTokenLabel(name string) error {
	if len(name) > 64 || strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return fmt.Errorf("token name %q is not allowed: use at most 64 printable characters", name)
	}
	return nil
}

// newSecret returns a token's secret: 32 random bytes, base64url, as the
// owner token.
func newSecret() (string, error) {
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("make a token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}
