package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/wire"
)

// webEnv is an env whose server listens for browsers on a free port.
type webEnv struct {
	*env
	base  string // "http://127.0.0.1:PORT"
	token string
	// client makes the requests and WebSocket dials (nil: the default
	// client); a server with TLS needs one that trusts its certificate.
	client *http.Client
}

func newWebEnv(t *testing.T) *webEnv {
	t.Helper()
	e := newEnv(t)
	e.startServer()
	u, err := os.ReadFile(filepath.Join(e.dir, "url"))
	if err != nil {
		t.Fatalf("the server wrote no url file: %v", err)
	}
	tok, err := os.ReadFile(filepath.Join(e.dir, "token"))
	if err != nil {
		t.Fatalf("the server wrote no token file: %v", err)
	}
	return &webEnv{env: e, base: strings.TrimSuffix(strings.TrimSpace(string(u)), "/"), token: strings.TrimSpace(string(tok))}
}

// api sends a request with the bearer token and decodes a JSON answer into
// out (when not nil); it fails the test unless the status is want.
func (w *webEnv) api(method, path string, body any, want int, out any) {
	w.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, w.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+w.token)
	hc := w.client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		w.t.Fatalf("%s %s: %s, want %d: %s", method, path, resp.Status, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			w.t.Fatalf("%s %s: decode %q: %v", method, path, b, err)
		}
	}
}

// wsViewer is a browser-like viewer: a WebSocket carrying one wire frame
// per binary message.
type wsViewer struct {
	t      *testing.T
	c      *websocket.Conn
	w      *wire.Writer
	frames chan wire.Frame // copies; closed when the connection ends
	mu     sync.Mutex      // guards err
	err    error           // why the connection ended
	text   strings.Builder // snapshot and output bytes seen by until
}

// msgWriter writes each Write as one binary message, which is one frame
// for a wire.Writer.
type msgWriter struct{ c *websocket.Conn }

func (m msgWriter) Write(p []byte) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.c.Write(ctx, websocket.MessageBinary, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *webEnv) dialViewer(path string) *wsViewer {
	w.t.Helper()
	return w.dialViewerWith(path, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + w.token}}})
}

// dialViewerWith is dialViewer authenticated by opts instead of the token.
func (w *webEnv) dialViewerWith(path string, opts *websocket.DialOptions) *wsViewer {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts.HTTPClient = w.client
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(w.base, "http")+path, opts)
	if err != nil {
		status := ""
		if resp != nil {
			status = resp.Status
		}
		w.t.Fatalf("dial %s: %v %s", path, err, status)
	}
	v := &wsViewer{t: w.t, c: c, w: wire.NewWriter(msgWriter{c}), frames: make(chan wire.Frame, 1024)}
	go func() {
		defer close(v.frames)
		for {
			typ, msg, err := c.Read(context.Background())
			if err != nil {
				v.mu.Lock()
				v.err = err
				v.mu.Unlock()
				return
			}
			var buf []byte
			f, ferr := wire.ReadFrame(bytes.NewReader(msg), &buf)
			if typ != websocket.MessageBinary || ferr != nil || wire.HeaderSize+len(f.Payload) != len(msg) {
				v.mu.Lock()
				v.err = ferr
				v.mu.Unlock()
				w.t.Errorf("message (%v, %d bytes) is not exactly one frame: %v", typ, len(msg), ferr)
				return
			}
			v.frames <- f
		}
	}()
	w.t.Cleanup(func() { c.CloseNow() })
	return v
}

// until reads frames until fn accepts one, collecting the terminal bytes.
func (v *wsViewer) until(what string, fn func(wire.Frame) bool) wire.Frame {
	v.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case f, ok := <-v.frames:
			if !ok {
				v.mu.Lock()
				err := v.err
				v.mu.Unlock()
				v.t.Fatalf("waiting for %s: connection ended: %v (saw %q)", what, err, v.text.String())
			}
			switch f.Type {
			case wire.TypeOutput, wire.TypeSnapshot:
				_, data, _ := wire.ParseOutput(f.Payload)
				v.text.Write(data)
			}
			if fn(f) {
				return f
			}
		case <-timeout:
			v.t.Fatalf("timed out waiting for %s (saw %q)", what, v.text.String())
		}
	}
}

func (v *wsViewer) untilText(s string) {
	v.t.Helper()
	v.until("output "+s, func(wire.Frame) bool { return strings.Contains(v.text.String(), s) })
}

func isType(t wire.Type) func(wire.Frame) bool {
	return func(f wire.Frame) bool { return f.Type == t }
}

// sessionEvents returns the kinds of session id's events, from `termkeep
// events --json`.
func (e *env) sessionEvents(id string) ([]string, []api.Event) {
	e.t.Helper()
	var kinds []string
	var all []api.Event
	sc := bufio.NewScanner(strings.NewReader(e.mustTk("events", "--json")))
	for sc.Scan() {
		var ev api.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			e.t.Fatalf("events --json line %q: %v", sc.Text(), err)
		}
		if ev.Session == id {
			kinds = append(kinds, ev.Kind)
			all = append(all, ev)
		}
	}
	return kinds, all
}

// A browser creates a session over REST, watches and types into it over a
// WebSocket (through the same session host as `termkeep attach`), a
// read-only viewer is refused input but sees the output, then the session
// is renamed, closed and removed; every step is in the event history.
func TestWebViewerAndREST(t *testing.T) {
	w := newWebEnv(t)

	var sess api.Session
	w.api("POST", "/api/sessions", map[string]any{
		"name": "web", "command": []string{"sh", "-c", `echo "home=$HOME"; exec cat`}, "cwd": "/", "cols": 100, "rows": 30,
	}, 201, &sess)
	if sess.State != "running" || sess.Cols != 100 || sess.Rows != 30 {
		t.Fatalf("created %+v", sess)
	}
	var list []api.Session
	w.api("GET", "/api/sessions", nil, 200, &list)
	if len(list) != 1 || list[0].ID != sess.ID {
		t.Fatalf("list: %+v", list)
	}

	// A fresh viewer: welcome, a snapshot, then live output.
	ctl := w.dialViewer("/ws/sessions/web")
	f := ctl.until("welcome", isType(wire.TypeWelcome))
	var wel wire.Welcome
	if err := wire.ParseJSON(f.Payload, &wel); err != nil || wel.Session != sess.ID || wel.Resume != wire.ResumeSnapshot {
		t.Fatalf("welcome %s: %v", f.Payload, err)
	}
	// The server's environment is the base of a browser's session.
	ctl.untilText("home=" + os.Getenv("HOME"))
	if err := ctl.w.Input([]byte("typed-in-browser\r")); err != nil {
		t.Fatal(err)
	}
	ctl.untilText("typed-in-browser\r\ntyped-in-browser") // the pty's echo, then cat's

	// A read-only viewer from offset 0 gets the whole output, and an
	// error for its input.
	view := w.dialViewer("/ws/sessions/" + sess.ID + "?mode=view&from=0")
	view.until("welcome", isType(wire.TypeWelcome))
	view.untilText("typed-in-browser")
	if err := view.w.Input([]byte("from-the-viewer\r")); err != nil {
		t.Fatal(err)
	}
	f = view.until("error frame", isType(wire.TypeError))
	if code, msg, _ := wire.ParseError(f.Payload); code != wire.CodeForbidden || !strings.Contains(msg, "read-only") {
		t.Errorf("read-only input answered with %d %q", code, msg)
	}
	ctl.w.Input([]byte("second-line\r"))
	view.untilText("second-line")
	if strings.Contains(view.text.String(), "from-the-viewer") || strings.Contains(ctl.text.String(), "from-the-viewer") {
		t.Error("a read-only viewer's input reached the session")
	}

	// Both viewers are in the history; leaving detaches them.
	kinds, evs := w.sessionEvents(sess.ID)
	if len(kinds) < 3 || kinds[0] != "session.created" || kinds[1] != "viewer.attached" || kinds[2] != "viewer.attached" {
		t.Fatalf("events %v", kinds)
	}
	var d1, d2 map[string]any
	json.Unmarshal(evs[1].Detail, &d1)
	json.Unmarshal(evs[2].Detail, &d2)
	if d1["via"] != "web" || d1["mode"] != "control" || d2["mode"] != "view" {
		t.Errorf("attach details %s %s", evs[1].Detail, evs[2].Detail)
	}
	ctl.c.Close(websocket.StatusNormalClosure, "")
	view.c.Close(websocket.StatusNormalClosure, "")
	waitFor(t, 10*time.Second, "two viewer.detached events", func() bool {
		kinds, _ := w.sessionEvents(sess.ID)
		return strings.Count(strings.Join(kinds, " "), "viewer.detached") == 2
	})

	// Rename, kill, remove: a running session is removed only once ended.
	w.api("PATCH", "/api/sessions/web", map[string]any{"name": "web2"}, 200, &sess)
	if sess.Name != "web2" {
		t.Fatalf("renamed: %+v", sess)
	}
	w.api("DELETE", "/api/sessions/web2", nil, 409, nil)
	w.api("POST", "/api/sessions/web2/kill", nil, 200, &sess)
	if sess.State != "closed" {
		t.Fatalf("after kill: %+v", sess)
	}
	w.api("GET", "/api/sessions/web2", nil, 200, &sess)
	if sess.State != "closed" {
		t.Fatalf("a closed session stays listed as closed: %+v", sess)
	}
	w.api("DELETE", "/api/sessions/web2", nil, 204, nil)
	w.api("GET", "/api/sessions/web2", nil, 404, nil)

	kinds, _ = w.sessionEvents(sess.ID)
	want := []string{"session.created", "viewer.attached", "viewer.attached", "viewer.detached", "viewer.detached",
		"session.renamed", "session.closed", "session.removed"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Errorf("events\n got %v\nwant %v", kinds, want)
	}
}

// A message larger than the read limit closes that viewer's connection
// cleanly; the session does not notice.
func TestWebHugeMessageRefused(t *testing.T) {
	w := newWebEnv(t)
	id := strings.TrimSpace(w.mustTk("new", "--name", "big", "--", "cat"))
	v := w.dialViewer("/ws/sessions/big?from=-1")
	v.until("welcome", isType(wire.TypeWelcome))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Valid frames (acks, which a viewer may send and the host ignores),
	// so it is the size that is refused, not the content.
	var big bytes.Buffer
	fw := wire.NewWriter(&big)
	for big.Len() < 3<<20 {
		fw.Uint64(wire.TypeAck, 0)
	}
	v.c.Write(ctx, websocket.MessageBinary, big.Bytes())
	for range v.frames {
	}
	v.mu.Lock()
	err := v.err
	v.mu.Unlock()
	// The server closes with StatusMessageTooBig; when it does so while the
	// client is still writing the message, the client may only see its own
	// connection fail. Either way the viewer is gone, and nothing else is.
	if err == nil {
		t.Errorf("the connection survived a %d-byte message", big.Len())
	}
	if st := websocket.CloseStatus(err); st != -1 && st != websocket.StatusMessageTooBig {
		t.Errorf("connection ended with %v, want close status %v", err, websocket.StatusMessageTooBig)
	}
	other := w.dialViewer("/ws/sessions/big?from=-1")
	other.until("welcome", isType(wire.TypeWelcome))
	if s := w.session(id); s.State != "running" {
		t.Errorf("session after the refused message: %+v", s)
	}
}

// The event stream on the TCP listener carries every event in order as
// Server-Sent Events, resumes with Last-Event-ID, and `termkeep events`
// prints the same history.
func TestWebEventStream(t *testing.T) {
	w := newWebEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", w.base+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+w.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("GET /api/events: %s %s", resp.Status, ct)
	}
	streamed := make(chan api.Event, 100)
	go client.ReadEvents(resp.Body, func(e api.Event) error { streamed <- e; return nil })

	// A CLI viewer, and a session that exits on its own.
	id := strings.TrimSpace(w.mustTk("new", "--name", "ex", "--", "sh", "-c", "read x; exit 3"))
	s, err := w.c.Attach(ctx, id, wire.Hello{Role: wire.RoleViewer, From: 0})
	if err != nil {
		t.Fatal(err)
	}
	s.Input([]byte("go\r"))
	for {
		f, err := s.Next()
		if err != nil || f.Type == wire.TypeExit {
			break
		}
	}
	s.Close()

	want := []string{"session.created", "viewer.attached", "process.exited", "viewer.detached"}
	var got []api.Event
	for len(got) < len(want) {
		select {
		case e := <-streamed:
			if e.Session == id {
				got = append(got, e)
			}
		case <-ctx.Done():
			t.Fatalf("stream: %+v, want kinds %v", got, want)
		}
	}
	var kinds []string
	for i, e := range got {
		kinds = append(kinds, e.Kind)
		if i > 0 && e.ID <= got[i-1].ID {
			t.Errorf("event ids out of order: %+v", got)
		}
	}
	// process.exited and viewer.detached race: the viewer leaves after the
	// exit frame, which follows the exit's registration or not.
	if kinds[0] != want[0] || kinds[1] != want[1] || !strings.Contains(strings.Join(kinds[2:], " "), "process.exited") {
		t.Errorf("stream kinds %v, want %v", kinds, want)
	}
	var exited map[string]any
	for _, e := range got {
		if e.Kind == "process.exited" {
			json.Unmarshal(e.Detail, &exited)
		}
	}
	if exited["exit_code"] != float64(3) {
		t.Errorf("process.exited detail %v, want exit_code 3", exited)
	}

	// Resume after the first event: the rest, nothing before.
	req, _ = http.NewRequestWithContext(ctx, "GET", w.base+"/api/events?follow=0", nil)
	req.Header.Set("Authorization", "Bearer "+w.token)
	req.Header.Set("Last-Event-ID", strconv.FormatInt(got[0].ID, 10))
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	var resumed []api.Event
	client.ReadEvents(resp2.Body, func(e api.Event) error { resumed = append(resumed, e); return nil })
	if len(resumed) != len(got)-1 || resumed[0].ID != got[1].ID {
		t.Errorf("resumed after %d: %+v", got[0].ID, resumed)
	}

	// The CLI prints the same history, as a table and as JSON lines.
	table := w.mustTk("events")
	for _, k := range want {
		if !strings.Contains(table, k) {
			t.Errorf("`termkeep events` lacks %s:\n%s", k, table)
		}
	}
	if !strings.Contains(table, "exit_code=3") {
		t.Errorf("`termkeep events` lacks the exit code:\n%s", table)
	}
	cliKinds, _ := w.sessionEvents(id)
	if strings.Join(cliKinds, " ") != strings.Join(kinds, " ") {
		t.Errorf("events --json %v, stream %v", cliKinds, kinds)
	}
}

// `termkeep url` prints the address with the token in its fragment;
// `termkeep serve` said where to find it; opening it sends no token and
// sets no cookie.
func TestWebURL(t *testing.T) {
	w := newWebEnv(t)
	u := strings.TrimSpace(w.mustTk("url"))
	if u != w.base+"/#token="+w.token {
		t.Fatalf("termkeep url = %q, want %s/#token=%s", u, w.base, w.token)
	}
	// Its output is not a terminal here: it says where the address is,
	// and never writes the token to its log (TestSecurityTokenNotLogged).
	log, _ := os.ReadFile(filepath.Join(w.dir, "server.log"))
	if !strings.Contains(string(log), "`termkeep url` prints") {
		t.Errorf("serve did not say how to get the address:\n%s", log)
	}
	if strings.Contains(string(log), w.token) {
		t.Error("the token is in the server log")
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 == 3 || resp.StatusCode == http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Errorf("opening the URL: %s, cookies %v", resp.Status, resp.Cookies())
	}

	// Without a server ever having listened, `termkeep url` says what to do.
	e := newEnv(t)
	if _, errs, code := e.tk("url"); code != 1 || !strings.Contains(errs, "termkeep serve") {
		t.Errorf("termkeep url with no server: exit %d, %q", code, errs)
	}
}
