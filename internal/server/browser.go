package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode"

	"termkeep/internal/api"
	"termkeep/internal/store"
)

// Browsers hold no token and no cookie. A cookie is sent to every port of
// its host, so any page another local user serves on 127.0.0.1 would
// receive it; and a cross-site link could replace it (login CSRF). Instead
// the page, opened at an address with the token in its fragment
// (#token=…, which no server and no history sees), swaps the token for a
// browser credential of its own (POST /api/browser-sessions with the token
// as Authorization: Bearer) and keeps that in its origin's localStorage,
// which no other origin reads. It sends the credential as Authorization:
// Bearer on every fetch and, since a page cannot set headers on a
// WebSocket, as the subprotocol termkeep.auth.<credential> next to
// termkeep.v1, the one the server selects (it never echoes the
// credential).
//
// A credential acts as the token it was made from, checked again on every
// request: revoking that token or removing its user ends the credential
// too. It expires after 14 days unused (store.BrowserIdle) and can be
// revoked on its own (the page's Sign out, `termkeep token revoke`);
// either way its viewers and event streams end at once.

const (
	// browserSecretPrefix starts every browser credential, so the guard
	// looks it up among browser credentials first.
	browserSecretPrefix = "tkb_"
	// WSProtocol is the WebSocket subprotocol a viewer speaks.
	WSProtocol = "termkeep.v1"
	// WSAuthPrefix offers a browser credential in Sec-WebSocket-Protocol.
	WSAuthPrefix = "termkeep.auth."
	// browserIDPrefix tells a browser credential's id from a token's
	// (8 characters of base32, never a '-').
	browserIDPrefix = "b-"
	// maxLabel bounds the User-Agent kept as a credential's label.
	maxLabel = 80
)

// wsAuth returns the browser credential offered in the Sec-WebSocket-Protocol
// values of a handshake (each may list several, comma-separated). It is
// found only next to WSProtocol, the protocol the server then selects, and
// only if it is the one credential offered.
func wsAuth(values []string) (cred string, ok bool) {
	speaks := false
	for _, v := range values {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			switch {
			case p == WSProtocol:
				speaks = true
			case strings.HasPrefix(p, WSAuthPrefix):
				if cred != "" {
					return "", false
				}
				cred = p[len(WSAuthPrefix):]
			}
		}
	}
	if !speaks || cred == "" || !isTokenChars(cred) {
		return "", false
	}
	return cred, true
}

// isTokenChars reports whether s is made of base64url characters only, as
// every secret termkeep makes is.
func isTokenChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// lookupBrowser is the guard's way to browser credentials: the principal
// of the token an active credential was made from, as that token is now,
// and its use recorded at most once a minute.
func (s *Server) lookupBrowser(ctx context.Context, secret string) (p principal, ok bool, ended string) {
	c, err := s.store.BrowserCredBySecret(ctx, secret)
	if err != nil {
		if !errors.Is(err, store.ErrBrowserCredNotFound) && ctx.Err() == nil {
			s.log.Warn("look up a browser credential", "err", err)
		}
		return principal{}, false, ""
	}
	now := s.cfg.Now()
	switch {
	case c.RevokedAt != nil:
		return principal{}, false, api.CodeRevoked
	case !c.Active(now):
		return principal{}, false, api.CodeExpired
	}
	if c.Owner {
		// Made from an owner token that has since been replaced (the
		// token file removed, so a new one was made): no one's.
		if s.gw == nil || c.OwnerHash != store.SecretHash(s.gw.token) {
			return principal{}, false, api.CodeRevoked
		}
		p = ownerPrincipal()
	} else {
		t, err := s.store.Token(ctx, c.Token)
		switch {
		case errors.Is(err, store.ErrTokenNotFound) || err == nil && t.User != c.User:
			return principal{}, false, api.CodeRevoked
		case err != nil:
			return principal{}, false, ""
		case !t.Active(now):
			return principal{}, false, tokenEnded(t)
		}
		p = tokenPrincipal(t)
	}
	p.browser = c.ID
	if c.NeedsTouch(now) {
		if err := s.store.TouchBrowserCred(ctx, c.ID); err != nil && ctx.Err() == nil {
			s.log.Warn("record a browser credential's use", "browser", c.ID, "err", err)
		}
	}
	return p, true, ""
}

func (s *Server) browserView(c store.BrowserCred, now time.Time, names map[string]string) api.BrowserSession {
	out := api.BrowserSession{
		ID: c.ID, User: c.User, From: "owner", Label: c.Label,
		CreatedAt: c.CreatedAt, LastUsedAt: c.LastUsedAt, ExpiresAt: c.ExpiresAt(), RevokedAt: c.RevokedAt,
	}
	if !c.Owner {
		out.From, out.TokenName = c.Token, names[c.Token]
	}
	out.State = credState(c.RevokedAt, c.Active(now))
	return out
}

// seesBrowser reports whether p may see and revoke c: the owner every one,
// anyone else those made from its own token.
func (p principal) seesBrowser(c store.BrowserCred) bool {
	return p.owner || (p.tokenID != "" && c.Token == p.tokenID)
}

// handleBrowserSignIn is POST /api/browser-sessions: a page swaps the token
// it was opened with (Authorization: Bearer) for a credential of its own.
// A browser credential cannot make another: it would outlive its own
// revocation.
func (g *gateway) handleBrowserSignIn(w http.ResponseWriter, r *http.Request) {
	s, ctx, p := g.s, r.Context(), principalOf(r.Context())
	if p.browser != "" {
		writeError(w, http.StatusForbidden, "this request carries a browser credential already; sign in with the token itself (the address `termkeep url` prints)")
		return
	}
	secret, err := newSecret()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	secret = browserSecretPrefix + secret
	c := store.BrowserCred{ID: browserIDPrefix + newID(), Owner: p.owner, User: p.user, Label: browserLabel(r.UserAgent())}
	if p.owner {
		c.OwnerHash = store.SecretHash(g.token)
	} else {
		c.Token = p.tokenID
	}
	got, err := s.store.CreateBrowserCred(ctx, c, secret)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	from := "owner"
	if !got.Owner {
		from = got.Token
	}
	s.log.Info("browser signed in", "browser", got.ID, "user", got.User, "from", from)
	s.events.emit(store.EventBrowserSignedIn, "", map[string]any{"browser": got.ID, "user": got.User, "from": from, "label": got.Label})
	writeJSON(w, http.StatusCreated, api.BrowserSignIn{BrowserSession: s.browserView(got, s.cfg.Now(), nil), Credential: secret})
}

// handleBrowserSessions lists the browser sign-ins the request's principal
// sees: all of them for the owner (the unix socket included), those made
// from its own token for anyone else.
func (s *Server) handleBrowserSessions(w http.ResponseWriter, r *http.Request) {
	ctx, p := r.Context(), principalOf(r.Context())
	list, err := s.store.BrowserCreds(ctx)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	names := map[string]string{}
	if tokens, err := s.store.Tokens(ctx); err == nil {
		for _, t := range tokens {
			names[t.ID] = t.Name
		}
	}
	now := s.cfg.Now()
	out := []api.BrowserSession{}
	for _, c := range list {
		if !p.seesBrowser(c) {
			continue
		}
		v := s.browserView(c, now, names)
		v.Current = c.ID == p.browser
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, out)
}

// handleBrowserRevoke is DELETE /api/browser-sessions/{id} (the page's Sign
// out, its list's Revoke) and /v1/browser-sessions/{id}: the credential
// stops working and its viewers and event streams end at once. One the
// principal does not see answers as one that does not exist.
func (s *Server) handleBrowserRevoke(w http.ResponseWriter, r *http.Request) {
	ctx, p, id := r.Context(), principalOf(r.Context()), r.PathValue("id")
	was, err := s.store.BrowserCred(ctx, id)
	if err == nil && !p.seesBrowser(was) && was.ID != p.browser {
		err = store.ErrBrowserCredNotFound
	}
	if err == nil {
		err = s.store.RevokeBrowserCred(ctx, id)
	}
	if errors.Is(err, store.ErrBrowserCredNotFound) {
		writeError(w, http.StatusNotFound, "no signed-in browser %q (see `termkeep token ls --browsers`)", id)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	c, err := s.store.BrowserCred(ctx, id)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	// Last: a page signing out ends this very request's context too.
	if s.gw != nil {
		s.gw.conns.cut(browserConnKey(id))
	}
	if was.RevokedAt == nil {
		s.log.Info("browser credential revoked", "browser", id, "user", c.User)
		s.events.emit(store.EventBrowserRevoked, "", map[string]any{"browser": id, "user": c.User, "label": c.Label})
	}
	writeJSON(w, http.StatusOK, s.browserView(c, s.cfg.Now(), nil))
}

// browserConnKey is what a browser credential's requests in flight are
// tracked under (tokenConns), apart from the token it was made from.
func browserConnKey(id string) string { return "browser:" + id }

// browserLabel names a sign-in's browser for the list people revoke from:
// "Chrome 156 on Linux" rather than the whole User-Agent, which reads alike
// for every browser. A User-Agent it cannot read is kept, printable and at
// most maxLabel characters.
func browserLabel(ua string) string {
	ua = strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return -1
		}
		return r
	}, ua)
	if name, ok := readUserAgent(ua); ok && len(name) <= maxLabel {
		return name
	}
	if r := []rune(ua); len(r) > maxLabel {
		ua = string(r[:maxLabel-1]) + "…"
	}
	return ua
}

// readUserAgent finds the browser, its major version and the system in a
// User-Agent. The order matters: Edge and Opera also say Chrome, Chrome
// also says Safari, and every browser on an iPhone says Mac OS X.
func readUserAgent(ua string) (string, bool) {
	version := func(token string) string {
		i := strings.Index(ua, token)
		if i < 0 {
			return ""
		}
		v := ua[i+len(token):]
		if j := strings.IndexAny(v, ". ;)"); j >= 0 {
			v = v[:j]
		}
		return v
	}
	var browser string
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"FxiOS/", "Firefox"},
		{"CriOS/", "Chrome"}, {"HeadlessChrome/", "Chrome (headless)"}, {"Chromium/", "Chromium"}, {"Chrome/", "Chrome"},
	} {
		if v := version(b.token); v != "" {
			browser = b.name + " " + v
			break
		}
	}
	if browser == "" && strings.Contains(ua, "Safari/") {
		browser = strings.TrimSpace("Safari " + version("Version/"))
	}
	if browser == "" {
		return "", false
	}
	system := ""
	for _, o := range []struct{ token, name string }{
		{"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Android", "Android"}, {"CrOS", "ChromeOS"},
		{"Windows", "Windows"}, {"Mac OS X", "macOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, o.token) {
			system = o.name
			break
		}
	}
	if system == "" {
		return browser, true
	}
	return browser + " on " + system, true
}
