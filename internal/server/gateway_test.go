package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/outlog"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// testServer is a real server in a temporary state directory, listening on
// a free port of 127.0.0.1. It starts no holders: its sessions are ended
// ones put in the registry before it starts (tests of live sessions are in
// internal/e2e, which builds the binaries).
type testServer struct {
	t     *testing.T
	dir   statedir.Dir
	srv   *Server
	base  string // "http://127.0.0.1:PORT"
	token string
	logs  *syncBuffer
	done  chan error
	// cancel ends the context Serve runs under (newLiveServer's only).
	cancel context.CancelFunc
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// newTestServer starts a server on a fresh state directory whose registry
// holds the given ended sessions.
func newTestServer(t *testing.T, listen string, sessions ...store.Session) *testServer {
	t.Helper()
	return newTestServerWith(t, listen, nil, sessions...)
}

// newTestServerAt is newTestServer with the clock now (nil: time.Now).
func newTestServerAt(t *testing.T, listen string, now func() time.Time, sessions ...store.Session) *testServer {
	t.Helper()
	return newTestServerWith(t, listen, func(c *Config) { c.Now = now }, sessions...)
}

// newTestServerWith is newTestServer with tune changing the Config first
// (nil: none).
func newTestServerWith(t *testing.T, listen string, tune func(*Config), sessions ...store.Session) *testServer {
	t.Helper()
	// Unix socket paths are short: keep the directory out of t.TempDir's
	// long names.
	d, err := os.MkdirTemp("", "tks")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	dir := statedir.Dir(d)
	if err := dir.Ensure(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	logs := &syncBuffer{}
	cfg := Config{
		StateDir: dir, HolderArgv: []string{"/bin/false"}, Listen: listen,
		Logger: slog.New(slog.NewTextHandler(logs, nil)), KillGrace: time.Second,
	}
	if tune != nil {
		tune(&cfg)
	}
	if len(sessions) > 0 {
		st, err := store.Open(ctx, dir.DB(), cfg.Now)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sessions {
			if err := st.CreateSession(ctx, s); err != nil {
				t.Fatal(err)
			}
			// Every session has an output log; this one printed a line.
			l, err := outlog.Open(filepath.Join(dir.Session(s.ID), sessiondir.LogDir), outlog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			l.Append([]byte("hello from " + s.ID + "\r\n"))
			l.Close()
		}
		st.Close()
	}
	srv, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, dir: dir, srv: srv, logs: logs, done: make(chan error, 1)}
	go func() { ts.done <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		ts.srv.Shutdown(false)
		select {
		case <-ts.done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	if listen != "" && srv.gw != nil {
		b, err := os.ReadFile(dir.URL())
		if err != nil {
			t.Fatalf("url file: %v", err)
		}
		ts.base = strings.TrimSuffix(strings.TrimSpace(string(b)), "/")
		tok, err := os.ReadFile(dir.Token())
		if err != nil {
			t.Fatal(err)
		}
		ts.token = strings.TrimSpace(string(tok))
	}
	return ts
}

func endedSession(id, name string) store.Session {
	code := 0
	return store.Session{
		ID: id, Name: name, Command: []string{"true"}, Cwd: "/", Cols: 80, Rows: 24,
		State: store.StateExited, ExitCode: &code,
	}
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// do sends a request; auth is "bearer" (the owner token) or "".
func (ts *testServer) do(method, path, auth string, body any, hdr ...string) *http.Response {
	ts.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, ts.base+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	switch auth {
	case "bearer":
		req.Header.Set("Authorization", "Bearer "+ts.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	ts.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func expectStatus(t *testing.T, resp *http.Response, want int) []byte {
	t.Helper()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d; body: %s", resp.Request.Method, resp.Request.URL, resp.StatusCode, want, b)
	}
	return b
}

func expectJSONError(t *testing.T, resp *http.Response, want int, contains string) {
	t.Helper()
	b := expectStatus(t, resp, want)
	var e api.Error
	if err := json.Unmarshal(b, &e); err != nil || e.Error == "" {
		t.Fatalf("%s %s: body %q is not a JSON error", resp.Request.Method, resp.Request.URL, b)
	}
	if !strings.Contains(e.Error, contains) {
		t.Errorf("error %q does not mention %q", e.Error, contains)
	}
}

func TestListenerFiles(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0")
	for _, p := range []string{ts.dir.URL(), ts.dir.Token()} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %o, want 0600", p, st.Mode().Perm())
		}
	}
	u, err := url.Parse(ts.base)
	if err != nil || u.Hostname() != "127.0.0.1" || u.Port() == "0" || u.Port() == "" {
		t.Fatalf("url file says %q, want http://127.0.0.1:<the real port>", ts.base)
	}
	if len(ts.token) != 43 { // 32 bytes, base64url without padding
		t.Errorf("token %q has %d characters, want 43", ts.token, len(ts.token))
	}
	want := ts.base + "/#token=" + ts.token
	if got := ts.srv.BrowserURL(); got != want {
		t.Errorf("BrowserURL = %q, want %q", got, want)
	}
	if got, err := client.BrowserURL(ts.dir); err != nil || got != want {
		t.Errorf("client.BrowserURL = %q, %v; want %q", got, err, want)
	}
	if strings.Contains(ts.logs.String(), ts.token) {
		t.Error("the server logged its token")
	}
}

func TestListenerOffAndTaken(t *testing.T) {
	off := newTestServer(t, "")
	if off.srv.BrowserURL() != "" {
		t.Error("a server without --listen has a browser URL")
	}
	if _, err := os.Stat(off.dir.URL()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("url file with the listener off: %v", err)
	}
	if _, err := client.BrowserURL(off.dir); err == nil || !strings.Contains(err.Error(), "termkeep serve") {
		t.Errorf("client.BrowserURL without a listener: %v", err)
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	taken := newTestServer(t, busy.Addr().String())
	if taken.srv.BrowserURL() != "" {
		t.Error("a server whose port is taken has a browser URL")
	}
	if !strings.Contains(taken.logs.String(), "cannot listen for browsers") {
		t.Errorf("no warning about the taken port in the log:\n%s", taken.logs.String())
	}
	// The unix socket still serves.
	if _, err := client.New(taken.dir).Health(context.Background()); err != nil {
		t.Errorf("unix socket with the port taken: %v", err)
	}
}

func TestAuth(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0")

	expectJSONError(t, ts.do("GET", "/api/sessions", "", nil), 401, "termkeep url")
	expectJSONError(t, ts.do("GET", "/api/sessions", "", nil, "Authorization", "Bearer nope"), 401, "token")
	expectJSONError(t, ts.do("GET", "/api/sessions", "", nil, "Authorization", "Basic "+ts.token), 401, "token")
	expectJSONError(t, ts.do("GET", "/metrics", "", nil), 401, "token")
	expectStatus(t, ts.do("GET", "/api/sessions", "bearer", nil), 200)

	// The page is the same for everyone and holds nothing until its script
	// signs in: it is served without a token.
	page := ts.do("GET", "/", "", nil)
	expectStatus(t, page, 200)

	// Every answer, refusals included, carries the security headers.
	for _, resp := range []*http.Response{page, ts.do("GET", "/api/sessions", "", nil), ts.do("GET", "/api/sessions", "bearer", nil), ts.do("GET", "/", "", nil, "Host", "evil.example")} {
		for k, v := range securityHeaders {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s %s: %s = %q, want %q", resp.Request.Method, resp.Request.URL, k, got, v)
			}
		}
	}
}

// The cookie of before browser credentials authenticates nothing, and a
// server that sees it expires it.
func TestOldCookieIgnoredAndExpired(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0")
	cookie := oldTokenCookie + "=" + ts.token
	for _, resp := range []*http.Response{
		ts.do("GET", "/api/sessions", "", nil, "Cookie", cookie),
		ts.do("DELETE", "/api/sessions/x", "", nil, "Cookie", cookie, "X-Termkeep", "1"),
		ts.do("GET", "/", "", nil, "Cookie", cookie),
	} {
		if resp.Request.URL.Path != "/" {
			expectJSONError(t, resp, 401, "termkeep url")
		}
		var expired bool
		for _, c := range resp.Cookies() {
			expired = expired || (c.Name == oldTokenCookie && c.Value == "" && c.MaxAge < 0 && c.Path == "/")
		}
		if !expired {
			t.Errorf("%s %s with the old cookie: Set-Cookie %q, want it expired", resp.Request.Method, resp.Request.URL.Path, resp.Header["Set-Cookie"])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, strings.Replace(ts.base, "http", "ws", 1)+"/ws/sessions/x", &websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {cookie}}})
	if err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("WebSocket with the old cookie: %v %v, want 401", err, resp)
	}
	// Without it, nothing is set.
	if c := ts.do("GET", "/api/sessions", "bearer", nil).Header["Set-Cookie"]; len(c) != 0 {
		t.Errorf("Set-Cookie without the old cookie: %q", c)
	}
}

// An address of before, /path?token=X, sends the browser to the same path
// with the token in the fragment, which reaches no server: no cookie, no
// check, and the token does not authenticate the request.
func TestTokenAddressToFragment(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0")
	for _, tc := range []struct{ path, want string }{
		{"/?token=" + ts.token + "&session=abc", "/?session=abc#token=" + ts.token},
		{"/?token=wrong", "/#token=wrong"},
		{"/?token=a%26b%23c", "/#token=a%26b%23c"},
		{"//evil.example/x?token=" + ts.token, "/evil.example/x#token=" + ts.token},
		{"/api/sessions?token=" + ts.token, "/api/sessions#token=" + ts.token},
	} {
		resp := ts.do("GET", tc.path, "", nil)
		expectStatus(t, resp, http.StatusSeeOther)
		if loc := resp.Header.Get("Location"); loc != tc.want {
			t.Errorf("GET %s: Location %q, want %q", tc.path, loc, tc.want)
		}
		if c := resp.Header["Set-Cookie"]; len(c) != 0 {
			t.Errorf("GET %s set a cookie: %q", tc.path, c)
		}
		if resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: Cache-Control %q", tc.path, resp.Header.Get("Cache-Control"))
		}
	}
	// A query token authenticates nothing.
	expectStatus(t, ts.do("POST", "/api/sessions?token="+ts.token, "", map[string]any{"cwd": "/"}), 401)
	expectStatus(t, ts.do("HEAD", "/api/sessions?token="+ts.token, "", nil), 401)
}

func TestHostOrigin(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0")
	port := strings.TrimPrefix(ts.base, "http://127.0.0.1:")

	// DNS rebinding: the right address under a foreign name.
	expectJSONError(t, ts.do("GET", "/api/sessions", "bearer", nil, "Host", "evil.example:"+port), 403, "evil.example")
	expectJSONError(t, ts.do("GET", "/", "", nil, "Host", "evil.example:"+port), 403, "evil.example")
	expectStatus(t, ts.do("GET", "/api/sessions", "bearer", nil, "Host", "localhost:"+port), 200)
	expectStatus(t, ts.do("GET", "/api/sessions", "bearer", nil, "Host", "LOCALHOST:"+port), 200)

	// A foreign page's fetch, even one that holds a secret.
	expectJSONError(t, ts.do("GET", "/api/sessions", "bearer", nil, "Origin", "http://evil.example"), 403, "evil.example")
	expectJSONError(t, ts.do("GET", "/api/sessions", "bearer", nil, "Origin", "http://localhost:1"), 403, "origin")
	expectStatus(t, ts.do("GET", "/api/sessions", "bearer", nil, "Origin", "http://localhost:"+port), 200)
	// A state-changing call needs nothing but its bearer token: no
	// browser attaches one by itself, so there is no CSRF to guard against.
	expectJSONError(t, ts.do("DELETE", "/api/sessions/x", "bearer", nil), 404, `"x"`)

	// WebSocket upgrades: foreign Origin refused before anything else.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hdr := http.Header{"Authorization": {"Bearer " + ts.token}, "Origin": {"http://evil.example"}}
	_, resp, err := websocket.Dial(ctx, strings.Replace(ts.base, "http", "ws", 1)+"/ws/sessions/x", &websocket.DialOptions{HTTPHeader: hdr})
	if err == nil || resp == nil || resp.StatusCode != 403 {
		t.Errorf("WebSocket from a foreign origin: %v %v, want 403", err, resp)
	}
	// ?token= does not authenticate an upgrade.
	_, resp, err = websocket.Dial(ctx, strings.Replace(ts.base, "http", "ws", 1)+"/ws/sessions/x?token="+ts.token, nil)
	if err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("WebSocket with ?token=: %v %v, want 401", err, resp)
	}
}

func TestREST(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0", endedSession("aaaaaaaa", "old"), endedSession("bbbbbbbb", "other"))

	var list []api.Session
	json.Unmarshal(expectStatus(t, ts.do("GET", "/api/sessions", "bearer", nil), 200), &list)
	if len(list) != 2 {
		t.Fatalf("list: %+v", list)
	}
	var got api.Session
	json.Unmarshal(expectStatus(t, ts.do("GET", "/api/sessions/old", "bearer", nil), 200), &got)
	if got.ID != "aaaaaaaa" || got.State != "exited" {
		t.Fatalf("get by name: %+v", got)
	}
	expectJSONError(t, ts.do("GET", "/api/sessions/nope", "bearer", nil), 404, `"nope"`)
	expectJSONError(t, ts.do("GET", "/api/nothing", "bearer", nil), 404, "/api/nothing")

	// Rename.
	json.Unmarshal(expectStatus(t, ts.do("PATCH", "/api/sessions/old", "bearer", map[string]any{"name": "new"}), 200), &got)
	if got.Name != "new" {
		t.Fatalf("after rename: %+v", got)
	}
	expectStatus(t, ts.do("GET", "/api/sessions/new", "bearer", nil), 200)
	expectJSONError(t, ts.do("PATCH", "/api/sessions/new", "bearer", map[string]any{"name": "other"}), 409, "other")
	expectJSONError(t, ts.do("PATCH", "/api/sessions/new", "bearer", map[string]any{"name": "bad name!"}), 400, "not allowed")
	expectJSONError(t, ts.do("PATCH", "/api/sessions/new", "bearer", map[string]any{}), 400, "name")
	expectJSONError(t, ts.do("PATCH", "/api/sessions/new", "bearer", map[string]any{"nam": "x"}), 400, "unknown field")

	// Create needs a working directory that exists (the holder here is
	// /bin/false: real creation is tested end to end).
	expectJSONError(t, ts.do("POST", "/api/sessions", "bearer", map[string]any{"cwd": "/no/such/dir"}), 400, "does not exist")
	expectJSONError(t, ts.do("POST", "/api/sessions", "bearer", map[string]any{"name": "other", "cwd": "/"}), 409, "already exists")

	// Kill an ended session: it stays listed as it was. Then remove it.
	json.Unmarshal(expectStatus(t, ts.do("POST", "/api/sessions/new/kill", "bearer", nil), 200), &got)
	if got.State != "exited" {
		t.Errorf("killing an ended session changed it: %+v", got)
	}
	expectJSONError(t, ts.do("DELETE", "/api/sessions/new?force=maybe", "bearer", nil), 400, "force")
	expectStatus(t, ts.do("DELETE", "/api/sessions/new", "bearer", nil), 204)
	expectJSONError(t, ts.do("GET", "/api/sessions/new", "bearer", nil), 404, "new")
	if _, err := os.Stat(ts.dir.Session("aaaaaaaa")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("session directory after remove: %v", err)
	}
}

func TestWebSocketEndedSession(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0", endedSession("aaaaaaaa", "old"))
	ws := strings.Replace(ts.base, "http", "ws", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hdr := http.Header{"Authorization": {"Bearer " + ts.token}}

	for _, q := range []string{"mode=bogus", "from=x", "cols=80", "cols=0&rows=10", "scrollback=-1"} {
		_, resp, err := websocket.Dial(ctx, ws+"/ws/sessions/old?"+q, &websocket.DialOptions{HTTPHeader: hdr})
		if err == nil || resp == nil || resp.StatusCode != 400 {
			t.Errorf("?%s: %v %v, want 400", q, err, resp)
		}
	}
	_, resp, err := websocket.Dial(ctx, ws+"/ws/sessions/nope", &websocket.DialOptions{HTTPHeader: hdr})
	if err == nil || resp == nil || resp.StatusCode != 404 {
		t.Errorf("unknown session: %v %v, want 404", err, resp)
	}

	c, _, err := websocket.Dial(ctx, ws+"/ws/sessions/old?from=0", &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	var types []wire.Type
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			break
		}
		if typ != websocket.MessageBinary {
			t.Fatalf("a %v message; every message is binary", typ)
		}
		var buf []byte
		f, err := wire.ReadFrame(bytes.NewReader(msg), &buf)
		if err != nil || wire.HeaderSize+len(f.Payload) != len(msg) {
			t.Fatalf("message of %d bytes is not exactly one frame: %v", len(msg), err)
		}
		types = append(types, f.Type)
		if f.Type == wire.TypeWelcome {
			var w wire.Welcome
			if err := wire.ParseJSON(f.Payload, &w); err != nil || w.Session != "aaaaaaaa" || w.Name != "old" || !w.Exited {
				t.Errorf("welcome %s: %v", f.Payload, err)
			}
		}
		if f.Type == wire.TypeExit {
			break
		}
	}
	if len(types) < 2 || types[0] != wire.TypeWelcome || types[len(types)-1] != wire.TypeExit {
		t.Errorf("frames %v, want welcome ... exit", types)
	}
}

func TestEventsStream(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0", endedSession("aaaaaaaa", "old"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// Follow the stream on the TCP listener while things happen.
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.base+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+ts.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /api/events: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	streamed := make(chan api.Event, 100)
	go client.ReadEvents(resp.Body, func(e api.Event) error { streamed <- e; return nil })

	expectStatus(t, ts.do("PATCH", "/api/sessions/old", "bearer", map[string]any{"name": "renamed"}), 200)
	expectStatus(t, ts.do("DELETE", "/api/sessions/renamed", "bearer", nil), 204)

	want := []string{store.EventSessionRenamed, store.EventSessionRemoved}
	var got []api.Event
	for len(got) < len(want) {
		select {
		case e := <-streamed:
			got = append(got, e)
		case <-ctx.Done():
			t.Fatalf("stream gave %+v, want kinds %v", got, want)
		}
	}
	for i, e := range got {
		if e.Kind != want[i] || e.Session != "aaaaaaaa" || (i > 0 && e.ID <= got[i-1].ID) {
			t.Errorf("event %d = %+v, want %s of aaaaaaaa, ids increasing", i, e, want[i])
		}
	}
	var detail map[string]string
	json.Unmarshal(got[0].Detail, &detail)
	if detail["from"] != "old" || detail["to"] != "renamed" {
		t.Errorf("rename detail %s", got[0].Detail)
	}

	// The unix socket serves the same history; --after and Last-Event-ID resume.
	c := client.New(ts.dir)
	var all []api.Event
	if err := c.Events(ctx, 0, false, func(e api.Event) error { all = append(all, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ID != got[0].ID || all[1].ID != got[1].ID {
		t.Errorf("client.Events = %+v, want the two streamed events", all)
	}
	all = nil
	c.Events(ctx, got[0].ID, false, func(e api.Event) error { all = append(all, e); return nil })
	if len(all) != 1 || all[0].ID != got[1].ID {
		t.Errorf("client.Events after %d = %+v", got[0].ID, all)
	}
	r := ts.do("GET", "/api/events?follow=0", "bearer", nil, "Last-Event-ID", "999")
	if b := expectStatus(t, r, 200); strings.Contains(string(b), "data:") {
		t.Errorf("events after the last one: %q", b)
	}
	expectJSONError(t, ts.do("GET", "/api/events?after=x", "bearer", nil), 400, "x")
}

// A subscriber that does not read is dropped, never waited for, and a
// stream reader catches up from the registry.
func TestEventHubSlowSubscriber(t *testing.T) {
	ts := newTestServer(t, "")
	hub := ts.srv.events
	slow, ok := hub.subscribe()
	if !ok {
		t.Fatal("subscribe failed")
	}
	done := make(chan struct{})
	go func() {
		for i := 0; i < subBuffer+10; i++ {
			hub.emit("test.event", "s", map[string]any{"i": i})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("emit blocked on a subscriber that does not read")
	}
	n := 0
	for range slow.ch {
		n++
	}
	if n != subBuffer {
		t.Errorf("the slow subscriber got %d events before being dropped, want %d", n, subBuffer)
	}
	var all []api.Event
	client.New(ts.dir).Events(context.Background(), 0, false, func(e api.Event) error { all = append(all, e); return nil })
	if len(all) != subBuffer+10 {
		t.Errorf("the registry has %d events, want %d", len(all), subBuffer+10)
	}
}
