package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/api"
	"termkeep/internal/atomicfile"
	"termkeep/internal/rawio"
	"termkeep/internal/session"
	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// wsReadLimit bounds one WebSocket message from a browser: a frame is at
// most wire.MaxPayload plus its header, so anything larger is refused (the
// connection is closed with "message too big") before it is buffered.
const wsReadLimit = 2 << 20

// gateway is the server's TCP listener for browsers: the REST API, the
// WebSocket viewer endpoint, the event stream and the web UI, every request
// checked by the guard (auth.go) first. Viewers it accepts are served by
// the same session host code as `termkeep attach`; the WebSocket is only a
// transport carrying one wire frame per binary message.
type gateway struct {
	s     *Server
	ln    net.Listener
	http  *http.Server
	url   string // the address in use, "http://127.0.0.1:7420/"
	token string
	// ctx bounds every WebSocket viewer; cancel ends them when the server
	// stops (the HTTP server does not track hijacked connections).
	ctx    context.Context
	cancel context.CancelFunc
	// conns are the requests in flight of registry tokens, ended when
	// their token is revoked.
	conns tokenConns
	// viewers counts each registry token's open viewers (viewercap.go).
	viewers viewerCap
}

// startGateway listens on cfg.Listen and writes the address to the state
// directory's url file. It never fails the server: with no address, or one
// it cannot listen on, it logs why and returns nil, and the server serves
// the unix socket alone.
func startGateway(s *Server) *gateway {
	urlFile := s.cfg.StateDir.URL()
	token, err := loadOrCreateToken(s.cfg.StateDir)
	if err != nil {
		s.log.Warn("no owner token, so no listener for browsers; serving the unix socket only", "err", err)
		os.Remove(urlFile)
		return nil
	}
	if s.cfg.Listen == "" {
		os.Remove(urlFile)
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		s.log.Warn("cannot listen for browsers; serving the unix socket only (set another address with --listen or TERMKEEP_LISTEN, or --listen off)",
			"addr", s.cfg.Listen, "err", err)
		os.Remove(urlFile)
		return nil
	}
	addr := ln.Addr().(*net.TCPAddr)
	ln = newGateListener(ln, s.log, s.metrics) // gatelistener.go
	if s.gwTLS != nil {
		ln = tls.NewListener(ln, s.gwTLS)
	} else if !addr.IP.IsLoopback() {
		s.log.Warn("INSECURE: serving plain HTTP on a non-loopback address (--insecure-no-tls): anyone on the network path "+
			"can read the access token and every keystroke; give --tls-cert and --tls-key, or listen on 127.0.0.1 behind a TLS proxy",
			"addr", addr.String())
	}
	g := &gateway{s: s, ln: ln, token: token, url: gatewayURL(addr, s.gwTLS != nil, s.origins)}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	gd := newGuard(addr, token, g.url)
	gd.configure(s.gwTLS != nil, addr.Port, s.origins) // tls.go
	gd.limiter = newLoginLimiter(s.cfg.Now, s.log)     // loginlimit.go
	gd.lookup, gd.lookupBrowser, gd.conns = s.lookupToken, s.lookupBrowser, &g.conns
	gd.paths = s.serverPaths() // pathhide.go
	to := s.timeouts
	gd.onPass = to.passed
	// /healthz and /readyz answer before the guard: no token (stats.go).
	g.http = &http.Server{
		Handler:           to.withDeadlines(s.probes(gd.wrap(g.routes()))),
		ReadHeaderTimeout: to.header, IdleTimeout: to.idle,
		ConnContext: connContext,
	}
	if err := atomicfile.Write(urlFile, []byte(g.url+"\n"), false); err != nil {
		s.log.Warn("write the browser address", "file", urlFile, "err", err)
	}
	s.log.Info("listening for browsers", "url", g.url)
	return g
}

// BrowserURL returns the address to open in a browser, the token in its
// fragment (which the browser sends to no server), or "" when the server
// has no TCP listener.
func (s *Server) BrowserURL() string {
	if s.gw == nil {
		return ""
	}
	return BrowserLink(s.gw.url, s.gw.token)
}

// BrowserLink is the address that opens the UI at base signed in with
// secret: the secret in the fragment, never in the path or the query, so
// it reaches no server, no log and no history; the page swaps it for a
// credential of its own (browser.go).
func BrowserLink(base, secret string) string {
	return base + "#" + url.Values{"token": {secret}}.Encode()
}

func (g *gateway) serve() {
	if err := g.http.Serve(g.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		g.s.log.Error("browser listener stopped", "err", err)
	}
}

func (g *gateway) close(ctx context.Context) {
	g.cancel()
	g.http.Shutdown(ctx)
	g.http.Close()
}

func (g *gateway) routes() http.Handler {
	s := g.s
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/health", s.handleHealth)
	mux.HandleFunc("GET /api/me", s.handleMe)                           // principal.go
	mux.HandleFunc("POST /api/browser-sessions", g.handleBrowserSignIn) // browser.go
	mux.HandleFunc("GET /api/browser-sessions", s.handleBrowserSessions)
	mux.HandleFunc("DELETE /api/browser-sessions/{id}", s.handleBrowserRevoke)
	mux.HandleFunc("GET /api/sessions", s.handleList)
	mux.HandleFunc("POST /api/sessions", g.handleCreate)
	mux.HandleFunc("GET /api/sessions/{ref}", s.withSession(s.handleGet))
	mux.HandleFunc("PATCH /api/sessions/{ref}", s.withSession(g.handleRename))
	mux.HandleFunc("POST /api/sessions/{ref}/kill", s.withSession(s.handleKill))
	mux.HandleFunc("DELETE /api/sessions/{ref}", s.withSession(s.handleRemove))
	mux.HandleFunc("POST /api/sessions/{ref}/restore", s.withSession(s.handleRestore))
	mux.HandleFunc("POST /api/sessions/{ref}/size", s.withSession(s.handleSize))           // size.go
	mux.HandleFunc("GET /api/sessions/{ref}/grep", s.withSession(s.handleGrep))            // export.go
	mux.HandleFunc("GET /api/sessions/{ref}/replay", s.withSession(s.replay.handleReplay)) // replay.go
	mux.HandleFunc("GET /api/sessions/{ref}/replay/screen", s.withSession(s.replay.handleReplayScreen))
	mux.HandleFunc("GET /api/sessions/{ref}/replay/output", s.withSession(s.replay.handleReplayOutput))
	mux.HandleFunc("GET /api/workspaces", g.handleWorkspaces)
	g.shareRoutes(mux) // share.go
	mux.HandleFunc("GET /api/events", s.handleEvents)
	mux.HandleFunc("GET /api/stats", s.handleStats) // stats.go
	mux.HandleFunc("GET /metrics", s.handleMetrics) // metrics.go: a token that sees every session
	mux.HandleFunc("GET /ws/sessions/{ref}", s.withSession(g.handleWS))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no API endpoint %s %s (see docs/protocol.md)", r.Method, r.URL.Path)
	})
	ui := s.cfg.WebUI
	if ui == nil {
		ui = http.HandlerFunc(placeholderUI)
	}
	mux.Handle("/", ui)
	return mux
}

// placeholderUI answers page requests when the binary carries no web UI.
func placeholderUI(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "termkeep is running. This build carries no web UI; the API is at /api/sessions and viewers connect to /ws/sessions/{id}.\n")
}

// handleCreate is POST /api/sessions. Whoever asks, the owner token
// included, the session starts from a clean login environment with the
// request's variables over it, never from the server's (childenv.go).
func (g *gateway) handleCreate(w http.ResponseWriter, r *http.Request) {
	var req api.CreateRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if status, err := principalOf(r.Context()).scopeCreate(&req); err != nil {
		writeError(w, status, "%v", err)
		return
	}
	sess, status, err := g.s.create(r.Context(), req, envLogin)
	if err != nil {
		writeError(w, status, "%v", err)
		return
	}
	writeJSON(w, http.StatusCreated, g.s.view(sess, g.s.host(sess.ID)))
}

// handleRename is PATCH /api/sessions/{ref} with {"name": "new"}; an empty
// name removes the session's name.
func (g *gateway) handleRename(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	var req api.RenameRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if req.Name == nil {
		writeError(w, http.StatusBadRequest, `send the new name as {"name": "new-name"} (an empty name removes it)`)
		return
	}
	name := strings.TrimSpace(*req.Name)
	if err := checkName(name); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if err := g.s.nameIsNoID(r.Context(), name, sess.ID); err != nil {
		writeError(w, http.StatusConflict, "%v", err)
		return
	}
	if name != sess.Name {
		err := g.s.store.Rename(r.Context(), sess.ID, name)
		switch {
		case errors.Is(err, store.ErrNameTaken):
			writeError(w, http.StatusConflict, "a session named %q already exists; pick another name", name)
			return
		case errors.Is(err, store.ErrNotFound):
			writeError(w, http.StatusNotFound, "no session %q (it was removed)", ref(sess))
			return
		case err != nil:
			writeError(w, http.StatusInternalServerError, "%v", err)
			return
		}
		g.s.events.emit(store.EventSessionRenamed, sess.ID, map[string]any{"from": sess.Name, "to": name})
		h.SetName(name) // for meta.json, which termkeep doctor --rebuild reads
	}
	got, err := g.s.store.Session(r.Context(), sess.ID)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, g.s.view(got, h))
}

// viewerHello builds the Hello a WebSocket viewer would have sent from the
// query: from (absent: a snapshot, then live; N: resume from offset N; -1:
// live only), scrollback, cols and rows; version (absent: 4, whose
// resizes take the session's size, as pages did before version 6), fit
// and name.
func viewerHello(sess store.Session, q map[string][]string) (wire.Hello, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	hello := wire.Hello{Version: 4, Role: wire.RoleViewer, Session: sess.ID, From: wire.FromSnapshot}
	if v := get("version"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < wire.MinVersion {
			return hello, fmt.Errorf("version=%q is not a protocol version (%d..%d)", v, wire.MinVersion, wire.Version)
		}
		hello.Version = min(n, wire.Version)
	}
	switch v := get("fit"); v {
	case "", "0":
	case "1":
		hello.Fit = true
	default:
		return hello, fmt.Errorf("fit=%q is not 0 or 1", v)
	}
	hello.Name = get("name")
	if v := get("from"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < wire.FromSnapshot {
			return hello, fmt.Errorf("from=%q is not an offset (a number of bytes, or -1 for live output only)", v)
		}
		hello.From = n
	}
	if v := get("scrollback"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return hello, fmt.Errorf("scrollback=%q is not a number of lines", v)
		}
		hello.Scrollback = n
	}
	cols, rows := get("cols"), get("rows")
	if cols != "" || rows != "" {
		c, err1 := strconv.ParseUint(cols, 10, 16)
		r, err2 := strconv.ParseUint(rows, 10, 16)
		if err1 != nil || err2 != nil || wire.CheckSize(uint16(c), uint16(r)) != nil {
			return hello, fmt.Errorf("cols=%q rows=%q is not a terminal size (1..%d each, both given)", cols, rows, wire.MaxDim)
		}
		hello.Cols, hello.Rows = uint16(c), uint16(r)
	}
	return hello, nil
}

// handleWS is GET /ws/sessions/{ref}: a viewer over a WebSocket. The guard
// has checked the token, the Host and the Origin; here the query becomes
// the viewer's Hello and the connection is handed to the session host.
// Each binary message the server sends is exactly one wire frame, header
// included; the browser sends frames the same way.
func (g *gateway) handleWS(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	q := r.URL.Query()
	hello, err := viewerHello(sess, q)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	// A read-only token's viewers are read-only whatever the mode asks.
	readOnly := principalOf(r.Context()).readOnly
	switch q.Get("mode") {
	case "", "control":
	case "view":
		readOnly = true
	default:
		writeError(w, http.StatusBadRequest, "mode=%q is not a viewer mode: use view (watch only) or control", q.Get("mode"))
		return
	}
	id, limit := principalOf(r.Context()).tokenID, g.s.maxViewersPerToken()
	if id == "" {
		id, limit = ownerKey, limit*ownerViewers // the owner's credential
	}
	release, err := g.viewers.take(id, limit)
	if err != nil {
		writeError(w, http.StatusTooManyRequests, "%v", err)
		return
	}
	defer release()
	if err := roomForViewer(); err != nil { // viewerroom.go
		writeError(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	// The guard has already compared the Origin with this server's own
	// origins, which is stricter than the library's same-host check.
	// A page offers WSProtocol next to its credential (browser.go): only
	// WSProtocol is ever selected, so the credential is not echoed.
	c, err := websocket.Accept(rawHijack{w}, r, &websocket.AcceptOptions{InsecureSkipVerify: true, Subprotocols: []string{WSProtocol}})
	if err != nil {
		return // Accept has answered
	}
	ctx, cancel := context.WithCancel(g.ctx)
	defer cancel()
	// The request's context ends when its token expires or is revoked
	// (guard.serveAs); so does the viewer.
	defer context.AfterFunc(r.Context(), cancel)()
	nc := newWSConn(ctx, c, wsReadLimit) // wsconn.go
	hello.ReadOnly = readOnly
	started, detached := g.s.viewerArrival(sess, hello, wire.ViewerWeb, readOnly, r.RemoteAddr)
	defer detached()
	// The host pings the viewer with wire frames (ViewerOptions), so a
	// browser that vanished is noticed here as on the unix socket.
	opts := g.s.viewerOptions(sess, wire.ViewerWeb, readOnly)
	opts.Started = started
	opts.Party = g.s.webParty(r) // share.go
	if opts.Party.Kind == "link" {
		// A share link's page: the others see the link's name.
		opts.Kind, opts.ViewerName = wire.ViewerShare, opts.Party.Name
	}
	h.ServeViewer(nc, hello, opts)
}

// rawHijack gives the WebSocket library the browser's connection with raw
// reads and writes (hijackRaw), as the unix socket's viewers have theirs
// (handleAttach); the library reads what brw holds first, then the
// connection.
type rawHijack struct{ http.ResponseWriter }

func (h rawHijack) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("connection cannot be upgraded")
	}
	return hijackRaw(hj)
}

// hijackRaw takes the connection over from the HTTP server with raw reads
// and writes (rawio.NewConn; a TLS connection stays as it is): the
// connection, and brw, whose writer writes to it and whose reader may hold
// bytes the HTTP server read already, which come before the connection's.
func hijackRaw(hj http.Hijacker) (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	// The HTTP server's deadlines were for one request: the stream lives
	// as long as its pings are answered. (net/http clears them today, but
	// its documentation leaves them to the caller.)
	c.SetDeadline(time.Time{})
	if err := brw.Writer.Flush(); err != nil {
		c.Close()
		return nil, nil, err
	}
	raw := rawio.NewConn(c)
	brw.Writer.Reset(raw)
	return raw, brw, nil
}
