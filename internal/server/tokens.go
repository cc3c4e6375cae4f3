package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"

	"termkeep/internal/api"
	"termkeep/internal/session"
	"termkeep/internal/store"
)

// Access tokens: made, listed and revoked on the unix socket (/v1/tokens,
// the owner's), and as a session's share links on the page
// (/api/sessions/{ref}/links, share.go). A token's secret is made here,
// shown once in the answer to its creation, and never stored or logged:
// the registry keeps its SHA-256.

// maxTokenLife bounds --expires, far beyond any use, so the arithmetic
// cannot overflow.
const maxTokenLife = 100 * 365 * 24 * time.Hour

// tokenDesk makes, shows and revokes tokens. Revoking one ends its
// requests in flight, through the gateway's connections.
type tokenDesk struct {
	store  *store.Store
	now    func() time.Time
	log    *slog.Logger
	events *eventHub
	gw     func() *gateway // the browser gateway (nil: no TCP listener)
}

// userExists reports whether name is the owner or a registered user.
func (d *tokenDesk) userExists(ctx context.Context, name string) (bool, error) {
	if name == currentUser() {
		return true, nil
	}
	_, err := d.store.User(ctx, name)
	if errors.Is(err, store.ErrUserNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (d *tokenDesk) view(ctx context.Context, t store.Token, now time.Time) api.Token {
	out := api.Token{
		ID: t.ID, Name: t.Name, User: t.User, Session: t.Session, Workspace: t.Workspace, ReadOnly: t.ReadOnly,
		ExpiresAt: t.ExpiresAt, CreatedAt: t.CreatedAt, LastUsedAt: t.LastUsedAt, RevokedAt: t.RevokedAt,
	}
	out.State = credState(t.RevokedAt, t.Active(now))
	if t.Session != "" {
		if sess, err := d.store.Session(ctx, t.Session); err == nil {
			out.SessionName = sess.Name
		}
	}
	return out
}

func (d *tokenDesk) handleTokens(w http.ResponseWriter, r *http.Request) {
	list, err := d.store.Tokens(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	now := d.now()
	out := make([]api.Token, 0, len(list))
	for _, t := range list {
		out = append(out, d.view(r.Context(), t, now))
	}
	writeJSON(w, http.StatusOK, out)
}

// handleTokenCreate makes a token (create).
func (d *tokenDesk) handleTokenCreate(w http.ResponseWriter, r *http.Request) {
	var req api.TokenRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	out, status, err := d.create(r.Context(), req)
	if err != nil {
		writeError(w, status, "%v", err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

// create makes the token req asks for, or says why not and the
// status to answer. A session-scoped token reaches the session by id, so
// it follows the session through renames; its user is the session's
// owner unless given, and must be.
func (d *tokenDesk) create(ctx context.Context, req api.TokenRequest) (api.TokenCreated, int, error) {
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
		sess, err := d.store.Resolve(ctx, req.Session)
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
	if ok, err := d.userExists(ctx, t.User); err != nil {
		return none, http.StatusInternalServerError, err
	} else if !ok {
		return none, http.StatusNotFound, fmt.Errorf("no user %q: add one with `termkeep user add %s`", t.User, t.User)
	}
	if t.Workspace != "" {
		if _, err := d.store.Workspace(ctx, t.Workspace); errors.Is(err, store.ErrWorkspaceNotFound) {
			return none, http.StatusNotFound, fmt.Errorf("no workspace %q (see `termkeep workspace ls`)", t.Workspace)
		} else if err != nil {
			return none, http.StatusInternalServerError, err
		}
	}
	now := d.now()
	if req.ExpiresIn > 0 {
		exp := now.Add(time.Duration(req.ExpiresIn) * time.Second)
		t.ExpiresAt = &exp
	}
	t.CreatedAt = now
	secret, err := newSecret()
	if err != nil {
		return none, http.StatusInternalServerError, err
	}
	got, err := d.store.CreateToken(ctx, t, secret)
	if err != nil {
		return none, http.StatusInternalServerError, err
	}
	d.log.Info("access token created", "token", got.ID, "user", got.User, "session", got.Session,
		"workspace", got.Workspace, "read_only", got.ReadOnly)
	detail := map[string]any{"token": got.ID, "user": got.User, "name": got.Name, "session": got.Session,
		"workspace": got.Workspace, "read_only": got.ReadOnly, "expires_at": got.ExpiresAt}
	d.events.emit(store.EventTokenCreated, "", detail)
	out := api.TokenCreated{Token: d.view(ctx, got, now), Secret: secret}
	if !got.ReadOnly {
		out.Warning = api.WritableWarning
	}
	if gw := d.gw(); gw != nil {
		out.URL = BrowserLink(gw.url, secret)
	}
	return out, 0, nil
}

// handleTokenRevoke revokes a token (revoke).
func (d *tokenDesk) handleTokenRevoke(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	t, err := d.revoke(r.Context(), id)
	if errors.Is(err, store.ErrTokenNotFound) {
		writeError(w, http.StatusNotFound, "no token %q (see `termkeep token ls`)", id)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, d.view(r.Context(), t, d.now()))
}

// revoke revokes token id and ends its requests in flight: its
// viewers are disconnected and its event streams end. Revoking a revoked
// token changes nothing and records no event. It returns the token as it
// is now (store.ErrTokenNotFound when there is none).
func (d *tokenDesk) revoke(ctx context.Context, id string) (store.Token, error) {
	was, err := d.store.Token(ctx, id)
	if err == nil {
		err = d.store.RevokeToken(ctx, id)
	}
	if err != nil {
		return store.Token{}, err
	}
	if gw := d.gw(); gw != nil {
		gw.conns.cut(id)
	}
	t, err := d.store.Token(ctx, id)
	if err != nil {
		return store.Token{}, err
	}
	if was.RevokedAt == nil {
		d.log.Info("access token revoked", "token", id, "user", t.User)
		d.events.emit(store.EventTokenRevoked, "", map[string]any{"token": id, "user": t.User, "name": t.Name})
	}
	return t, nil
}

// handleLinks is GET /api/sessions/{ref}/links: the session's links that
// still work, oldest first.
func (d *tokenDesk) handleLinks(w http.ResponseWriter, r *http.Request, sess store.Session, _ *session.Host) {
	all, err := d.store.Tokens(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	now := d.now()
	out := []api.Token{}
	for _, t := range all {
		if t.Session == sess.ID && t.Active(now) {
			out = append(out, d.view(r.Context(), t, now))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleLinkCreate is POST /api/sessions/{ref}/links: a link to this
// session, its secret and address shown this once.
func (d *tokenDesk) handleLinkCreate(w http.ResponseWriter, r *http.Request, sess store.Session, _ *session.Host) {
	var req api.ShareRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	out, status, err := d.create(r.Context(), api.TokenRequest{
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
func (d *tokenDesk) handleLinkRevoke(w http.ResponseWriter, r *http.Request, sess store.Session, _ *session.Host) {
	id := r.PathValue("id")
	t, err := d.store.Token(r.Context(), id)
	if err == nil && t.Session != sess.ID {
		err = store.ErrTokenNotFound
	}
	if err == nil {
		t, err = d.revoke(r.Context(), id)
	}
	if errors.Is(err, store.ErrTokenNotFound) {
		writeError(w, http.StatusNotFound, "session %s has no link %q", ref(sess), id)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, d.view(r.Context(), t, d.now()))
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
