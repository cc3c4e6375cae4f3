package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"termkeep/internal/api"
	"termkeep/internal/atomicfile"
	"termkeep/internal/statedir"
)

// The owner token guards the TCP listener, and so do the registry's tokens
// of users (principal.go): the owner token may do everything, a registry
// token what its user and scope allow. The unix socket needs none: only the
// server's own uid can reach it (peerCheckListener).
//
// Every request proves what it is with Authorization: Bearer (a token, or
// a browser's credential, browser.go), or for a WebSocket with the
// credential in its subprotocols. Nothing authenticates by a cookie or by
// the address: a page on another port of the same host would receive a
// cookie, and an address ends up in histories and logs. Since no
// credential is ever attached by the browser on its own, a page of another
// origin has nothing to ride on (no CSRF); what it might still try is
// refused separately: a foreign Origin (cross-site WebSocket and fetch)
// and a foreign Host (DNS rebinding).

const (
	// oldTokenCookie is where browsers kept the owner token before: a
	// server that sees it expires it, and it authenticates nothing.
	oldTokenCookie = "termkeep_token"
	tokenBytes     = 32
)

// securityHeaders go on every answer of the TCP listener.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
	"X-Frame-Options":         "DENY",
	"Referrer-Policy":         "no-referrer",
	"X-Content-Type-Options":  "nosniff",
}

// loadOrCreateToken returns the owner token in dir, creating it (32 random
// bytes, base64url, mode 0600) if there is none. Only the server, which
// holds the state directory's lock, calls it.
func loadOrCreateToken(dir statedir.Dir) (string, error) {
	b, err := os.ReadFile(dir.Token())
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if len(tok) >= 32 {
			return tok, nil
		}
		// A truncated or empty file (a crash while writing, a hand edit)
		// is no token: make a fresh one.
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read the owner token: %w", err)
	}
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("make an owner token: %w", err)
	}
	tok := base64.RawURLEncoding.EncodeToString(raw)
	if err := atomicfile.Write(dir.Token(), []byte(tok+"\n"), false); err != nil {
		return "", fmt.Errorf("write the owner token: %w", err)
	}
	return tok, nil
}

// guard checks every request of the TCP listener before it reaches a
// handler: Host, Origin, path and secret, in that order, and puts the
// security headers on every answer.
type guard struct {
	token []byte
	// hosts are the Host values this server answers to, lower case:
	// the listen address and its localhost and 127.0.0.1 forms.
	hosts map[string]bool
	// origins are the same as browser origins ("http://host:port").
	origins map[string]bool
	// home is the URL the refusals point to.
	home string
	// secure: the listener serves TLS, so the old cookie is expired with
	// Secure (tls.go).
	secure bool
	// limiter counts wrong tokens per address (loginlimit.go); nil: no limit.
	limiter *loginLimiter
	// owner is who the owner token acts as.
	owner principal
	// lookup finds an active registry token by its secret (nil: the owner
	// token only); conns ends a token's requests when it is revoked.
	// Both lookups also say why a credential that once worked is refused
	// now (ended: api.CodeRevoked or api.CodeExpired; "" when unknown).
	lookup func(ctx context.Context, secret string) (p principal, ok bool, ended string)
	// lookupBrowser finds an active browser credential by its secret
	// (browser.go; nil: none are taken).
	lookupBrowser func(ctx context.Context, secret string) (p principal, ok bool, ended string)
	conns         *tokenConns
	// paths are the server's own, hidden from anyone but the owner
	// (pathhide.go).
	paths []string
	// onPass, when set, is told of each request the guard lets through,
	// before its handler runs: its connection is then authenticated
	// (gatelistener.go).
	onPass func(http.ResponseWriter, *http.Request)
}

// newGuard returns the guard for a listener on addr (its actual address,
// port resolved) serving token.
func newGuard(addr *net.TCPAddr, token string, home string) *guard {
	port := fmt.Sprint(addr.Port)
	g := &guard{token: []byte(token), hosts: map[string]bool{}, origins: map[string]bool{}, home: home, owner: ownerPrincipal()}
	names := []string{"localhost", "127.0.0.1"}
	if !addr.IP.IsUnspecified() {
		names = append(names, addr.IP.String())
	}
	if addr.IP.To4() == nil && (addr.IP.IsLoopback() || addr.IP.IsUnspecified()) {
		names = append(names, "::1")
	}
	for _, n := range names {
		hp := strings.ToLower(net.JoinHostPort(n, port))
		g.hosts[hp] = true
		g.origins["http://"+hp] = true
		if port == "80" {
			// Browsers leave the default port out of Host and Origin.
			h := strings.ToLower(n)
			if strings.Contains(h, ":") {
				h = "[" + h + "]"
			}
			g.hosts[h] = true
			g.origins["http://"+h] = true
		}
	}
	return g
}

func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		if r.RequestURI != "" && !strings.HasPrefix(r.RequestURI, "/") {
			// An absolute-form request line (GET http://host/path): Go
			// takes r.Host from the line and drops the Host header
			// unseen, so the check below could not see a mismatch. Only
			// a proxy is sent such lines, and this is no proxy.
			writeError(w, http.StatusBadRequest, "absolute-form request lines (GET http://host/path) are refused: send the path alone, with the host in the Host header")
			return
		}
		if !g.hosts[strings.ToLower(r.Host)] {
			// DNS rebinding: a page on evil.example whose name now points
			// at 127.0.0.1 sends its own name as Host.
			writeError(w, http.StatusForbidden, "this server answers only to %s; requests for host %q are refused", g.home, r.Host)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !g.origins[strings.ToLower(o)] {
			// A page of another origin (another port of localhost is
			// another origin but the same site): no WebSocket, no API call.
			writeError(w, http.StatusForbidden, "requests from pages of origin %q are refused; open %s instead", o, g.home)
			return
		}
		if err := checkRequestPath(r.URL.Path); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
		if _, err := r.Cookie(oldTokenCookie); err == nil {
			// Left by a server before browser credentials: it would reach
			// every port of this host, so it goes.
			http.SetCookie(w, &http.Cookie{Name: oldTokenCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: g.secure, SameSite: http.SameSiteStrictMode})
		}
		upgrade := strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
		if q := r.URL.Query(); q.Has("token") && r.Method == http.MethodGet && !upgrade {
			tokenToFragment(w, r, q)
			return
		}
		if isPage(r, upgrade) {
			// The page and its assets are the same for everyone and act as
			// no one: a page holds no credential until its script has
			// signed in, so it is served without one.
			next.ServeHTTP(w, r.WithContext(withPrincipal(r.Context(), principal{})))
			return
		}
		p, ok, ended := g.check(r, upgrade)
		if !ok {
			g.deny(w, r, ended)
			return
		}
		if p.readOnly && !safeMethod(r.Method) && !strings.HasPrefix(r.URL.Path, "/api/browser-sessions") {
			// Signing in and out changes no session: a read-only link's
			// page does both.
			writeError(w, http.StatusForbidden, "this access token is read-only: it can watch sessions, not change them")
			return
		}
		if g.onPass != nil {
			g.onPass(w, r)
		}
		g.serveAs(w, r, p, next)
	})
}

// isPage reports whether r asks for the web UI's page or assets rather
// than the API, a viewer or the metrics.
func isPage(r *http.Request, upgrade bool) bool {
	if upgrade || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return false
	}
	p := r.URL.Path
	return !strings.HasPrefix(p, "/api/") && !strings.HasPrefix(p, "/ws/") && p != "/metrics"
}

// check reports whether r carries a valid secret and who it acts as: in
// Authorization: Bearer, or for a WebSocket handshake a browser credential
// among its subprotocols (wsAuth). A malformed or wrong Authorization
// header fails whatever else the request carries: the client meant the
// header. ended says why a credential that once worked is refused.
func (g *guard) check(r *http.Request, upgrade bool) (p principal, ok bool, ended string) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, found := strings.Cut(h, " ")
		if !found || !strings.EqualFold(scheme, "Bearer") {
			return principal{}, false, ""
		}
		return g.authenticate(r.Context(), strings.TrimSpace(tok))
	}
	if upgrade {
		if cred, ok := wsAuth(r.Header.Values("Sec-WebSocket-Protocol")); ok && strings.HasPrefix(cred, browserSecretPrefix) {
			return g.authenticate(r.Context(), cred)
		}
	}
	return principal{}, false, ""
}

func (g *guard) match(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), g.token) == 1
}

// tokenToFragment answers an address of before browser credentials,
// /path?token=X: it sends the browser to the same path with the token in
// the fragment (#token=X), where the page signs in with it. It checks
// nothing and sets nothing: the token authenticates only when the page
// offers it.
func tokenToFragment(w http.ResponseWriter, r *http.Request, q url.Values) {
	tok := q.Get("token")
	q.Del("token")
	loc := redirectPath(r.URL.Path)
	if len(q) > 0 {
		loc += "?" + q.Encode()
	}
	loc += "#" + url.Values{"token": {tok}}.Encode()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", loc)
	w.WriteHeader(http.StatusSeeOther)
}

// refuse answers a request without a valid token. A credential that once
// worked (ended: revoked or expired) is told so with a code a page stops
// on; the way to the owner's token is for the owner's tools, not for a
// guest whose link ended. Only the holder of the secret can receive this
// answer (a secret is 256 random bits), so it tells no one else anything.
func (g *guard) refuse(w http.ResponseWriter, r *http.Request, ended string) {
	switch ended {
	case api.CodeRevoked:
		writeJSON(w, http.StatusUnauthorized, api.Error{Code: ended,
			Error: "this access token was revoked: it reaches nothing now; ask whoever shared it for a new link (the owner signs in again at the address `termkeep url` prints)"})
		return
	case api.CodeExpired:
		writeJSON(w, http.StatusUnauthorized, api.Error{Code: ended,
			Error: "this access token expired: it reaches nothing now; ask whoever shared it for a new link (the owner signs in again at the address `termkeep url` prints)"})
		return
	}
	writeError(w, http.StatusUnauthorized, "missing or wrong access token: open the address `termkeep url` prints (%s#token=…), "+
		"or send Authorization: Bearer <token> (the token is in the state directory's token file)", g.home)
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}
