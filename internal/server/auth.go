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
	"time"

	"termkeep/internal/atomicfile"
	"termkeep/internal/statedir"
)

// The owner token guards the TCP listener, and so do the registry's tokens
// of users (principal.go): the owner token may do everything, a registry
// token what its user and scope allow. The unix socket needs none: only the
// server's own uid can reach it (peerCheckListener).
//
// A browser proves it holds a token with a cookie, set when it opens a
// page with ?token=; other clients send Authorization: Bearer. Everything a
// browser can be tricked into by another page is refused separately: a
// foreign Origin (cross-site WebSocket and fetch), a foreign Host (DNS
// rebinding) and a state-changing request carried by the cookie alone
// without the custom header a form or a simple request cannot set (CSRF).

const (
	// TokenCookie is the cookie a browser carries its token in.
	TokenCookie = "termkeep_token"
	// CSRFHeader must accompany state-changing requests authenticated by
	// the cookie: a page on another origin cannot set it without a CORS
	// preflight, which this server never allows.
	CSRFHeader = "X-Termkeep"
	tokenBytes = 32
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
// handler: Host, token, Origin and the CSRF header, in that order, and puts
// the security headers on every answer.
type guard struct {
	token []byte
	// hosts are the Host values this server answers to, lower case:
	// the listen address and its localhost and 127.0.0.1 forms.
	hosts map[string]bool
	// origins are the same as browser origins ("http://host:port").
	origins map[string]bool
	// home is the URL the refusals point to.
	home string
	// secure: the listener serves TLS, so the cookie is Secure (tls.go).
	secure bool
	// limiter counts wrong tokens per address (loginlimit.go); nil: no limit.
	limiter *loginLimiter
	// owner is who the owner token acts as.
	owner principal
	// lookup finds an active registry token by its secret (nil: the owner
	// token only); conns ends a token's requests when it is revoked.
	lookup func(ctx context.Context, secret string) (principal, bool)
	conns  *tokenConns
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
		if !g.hosts[strings.ToLower(r.Host)] {
			// DNS rebinding: a page on evil.example whose name now points
			// at 127.0.0.1 sends its own name as Host.
			writeError(w, http.StatusForbidden, "this server answers only to %s; requests for host %q are refused", g.home, r.Host)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !g.origins[strings.ToLower(o)] {
			// A page of another origin (another port of localhost is
			// another origin but the same site, so the cookie alone does
			// not rule it out): no WebSocket, no API call.
			writeError(w, http.StatusForbidden, "requests from pages of origin %q are refused; open %s instead", o, g.home)
			return
		}
		upgrade := strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
		if q := r.URL.Query(); q.Has("token") && r.Method == http.MethodGet && !upgrade {
			g.login(w, r, q)
			return
		}
		bearer, p, ok := g.check(r)
		if !ok {
			g.deny(w, r)
			return
		}
		if !bearer && !safeMethod(r.Method) && r.Header.Get(CSRFHeader) != "1" {
			writeError(w, http.StatusForbidden, "a %s request needs the header %s: 1 (or Authorization: Bearer <token>)", r.Method, CSRFHeader)
			return
		}
		if p.readOnly && !safeMethod(r.Method) {
			writeError(w, http.StatusForbidden, "this access token is read-only: it can watch sessions, not change them")
			return
		}
		if g.onPass != nil {
			g.onPass(w, r)
		}
		g.serveAs(w, r, p, next)
	})
}

// check reports whether r carries a valid token, who it acts as, and
// whether it came in the Authorization header. A malformed or wrong
// Authorization header fails even with a good cookie: the client meant the
// header.
func (g *guard) check(r *http.Request) (bearer bool, p principal, ok bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, found := strings.Cut(h, " ")
		if !found || !strings.EqualFold(scheme, "Bearer") {
			return true, principal{}, false
		}
		p, ok := g.authenticate(r.Context(), strings.TrimSpace(tok))
		return true, p, ok
	}
	if c, err := r.Cookie(TokenCookie); err == nil {
		p, ok := g.authenticate(r.Context(), c.Value)
		return false, p, ok
	}
	return false, principal{}, false
}

func (g *guard) match(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), g.token) == 1
}

// login answers a page opened with ?token=: it sets the cookie to that
// token (the owner's or a registry token, which then lasts no longer than
// the token) and sends the browser to the same address without the token,
// so it drops out of the address bar and the history.
func (g *guard) login(w http.ResponseWriter, r *http.Request, q url.Values) {
	tok := q.Get("token")
	p, ok := g.authenticate(r.Context(), tok)
	if !ok {
		g.deny(w, r)
		return
	}
	maxAge := 365 * 24 * time.Hour
	if p.expires != nil {
		maxAge = min(maxAge, time.Until(*p.expires)+time.Second)
	}
	http.SetCookie(w, &http.Cookie{
		Name: TokenCookie, Value: tok, Path: "/",
		HttpOnly: true, Secure: g.secure, SameSite: http.SameSiteStrictMode, MaxAge: int(maxAge.Seconds()),
	})
	q.Del("token")
	// Never a protocol-relative Location ("//evil.example"): that would
	// make this an open redirect.
	loc := "/" + strings.TrimLeft(r.URL.Path, "/\\")
	if len(q) > 0 {
		loc += "?" + q.Encode()
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, loc, http.StatusSeeOther)
}

// refuse answers a request without a valid token: a short page for a
// browser opening a page, a JSON error for everything else.
func (g *guard) refuse(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") && !strings.HasPrefix(r.URL.Path, "/ws/") &&
		!strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "termkeep: this page needs the access token.\n\n"+
			"Run `termkeep url` on the machine that runs termkeep and open the address it prints\n"+
			"(%s?token=...). The browser keeps the token in a cookie from then on.\n", g.home)
		return
	}
	writeError(w, http.StatusUnauthorized, "missing or wrong access token: open the address `termkeep url` prints, or send Authorization: Bearer <token> (the token is in the state directory's token file)")
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}
