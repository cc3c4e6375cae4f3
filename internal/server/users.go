package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"termkeep/internal/api"
	"termkeep/internal/store"
)

// Users and their tokens are managed on the unix socket only, that is by
// the owner: /v1/users, and /v1/tokens (tokens.go).

func (s *Server) accessRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/users", ownerOnly(s.handleUsers))
	mux.HandleFunc("POST /v1/users", ownerOnly(s.handleUserAdd))
	mux.HandleFunc("DELETE /v1/users/{name}", ownerOnly(s.handleUserRemove))
	mux.HandleFunc("GET /v1/tokens", ownerOnly(s.tokens.handleTokens))
	mux.HandleFunc("POST /v1/tokens", ownerOnly(s.tokens.handleTokenCreate))
	mux.HandleFunc("DELETE /v1/tokens/{id}", ownerOnly(s.tokens.handleTokenRevoke))
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
