package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/e2e"
	"termkeep/internal/wire"
)

// A browser creates a session over REST, watches and types into it over a
// WebSocket (through the same session host as `termkeep attach`), a
// read-only viewer is refused input but sees the output, then the session
// is renamed, closed and removed; every step is in the event history.
func TestWebViewerAndREST(t *testing.T) {
	w := e2e.NewWebEnv(t)

	var sess api.Session
	w.API("POST", "/api/sessions", map[string]any{
		"name": "web", "command": []string{"sh", "-c", `echo "home=$HOME"; exec cat`}, "cwd": "/", "cols": 100, "rows": 30,
	}, 201, &sess)
	if sess.State != "running" || sess.Cols != 100 || sess.Rows != 30 {
		t.Fatalf("created %+v", sess)
	}
	var list []api.Session
	w.API("GET", "/api/sessions", nil, 200, &list)
	if len(list) != 1 || list[0].ID != sess.ID {
		t.Fatalf("list: %+v", list)
	}

	// A fresh viewer: welcome, a snapshot, then live output.
	ctl := w.DialViewer("/ws/sessions/web")
	f := ctl.Until("welcome", e2e.IsType(wire.TypeWelcome))
	var wel wire.Welcome
	if err := wire.ParseJSON(f.Payload, &wel); err != nil || wel.Session != sess.ID || wel.Resume != wire.ResumeSnapshot {
		t.Fatalf("welcome %s: %v", f.Payload, err)
	}
	// The server's environment is the base of a browser's session.
	ctl.UntilText("home=" + os.Getenv("HOME"))
	if err := ctl.W.Input([]byte("typed-in-browser\r")); err != nil {
		t.Fatal(err)
	}
	ctl.UntilText("typed-in-browser\r\ntyped-in-browser") // the pty's echo, then cat's

	// A read-only viewer from offset 0 gets the whole output, and an
	// error for its input.
	view := w.DialViewer("/ws/sessions/" + sess.ID + "?mode=view&from=0")
	view.Until("welcome", e2e.IsType(wire.TypeWelcome))
	view.UntilText("typed-in-browser")
	if err := view.W.Input([]byte("from-the-viewer\r")); err != nil {
		t.Fatal(err)
	}
	f = view.Until("error frame", e2e.IsType(wire.TypeError))
	if code, msg, _ := wire.ParseError(f.Payload); code != wire.CodeForbidden || !strings.Contains(msg, "read-only") {
		t.Errorf("read-only input answered with %d %q", code, msg)
	}
	ctl.W.Input([]byte("second-line\r"))
	view.UntilText("second-line")
	if strings.Contains(view.Text.String(), "from-the-viewer") || strings.Contains(ctl.Text.String(), "from-the-viewer") {
		t.Error("a read-only viewer's input reached the session")
	}

	// Both viewers are in the history; leaving detaches them.
	kinds, evs := w.SessionEvents(sess.ID)
	if len(kinds) < 3 || kinds[0] != "session.created" || kinds[1] != "viewer.attached" || kinds[2] != "viewer.attached" {
		t.Fatalf("events %v", kinds)
	}
	var d1, d2 map[string]any
	json.Unmarshal(evs[1].Detail, &d1)
	json.Unmarshal(evs[2].Detail, &d2)
	if d1["via"] != "web" || d1["mode"] != "control" || d2["mode"] != "view" {
		t.Errorf("attach details %s %s", evs[1].Detail, evs[2].Detail)
	}
	ctl.C.Close(websocket.StatusNormalClosure, "")
	view.C.Close(websocket.StatusNormalClosure, "")
	e2e.WaitFor(t, 10*time.Second, "two viewer.detached events", func() bool {
		kinds, _ := w.SessionEvents(sess.ID)
		return strings.Count(strings.Join(kinds, " "), "viewer.detached") == 2
	})

	// Rename, kill, remove: a running session is removed only once ended.
	w.API("PATCH", "/api/sessions/web", map[string]any{"name": "web2"}, 200, &sess)
	if sess.Name != "web2" {
		t.Fatalf("renamed: %+v", sess)
	}
	w.API("DELETE", "/api/sessions/web2", nil, 409, nil)
	w.API("POST", "/api/sessions/web2/kill", nil, 200, &sess)
	if sess.State != "closed" {
		t.Fatalf("after kill: %+v", sess)
	}
	w.API("GET", "/api/sessions/web2", nil, 200, &sess)
	if sess.State != "closed" {
		t.Fatalf("a closed session stays listed as closed: %+v", sess)
	}
	w.API("DELETE", "/api/sessions/web2", nil, 204, nil)
	w.API("GET", "/api/sessions/web2", nil, 404, nil)

	kinds, _ = w.SessionEvents(sess.ID)
	want := []string{"session.created", "viewer.attached", "viewer.attached", "viewer.detached", "viewer.detached",
		"session.renamed", "session.closed", "session.removed"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Errorf("events\n got %v\nwant %v", kinds, want)
	}
}

// A message larger than the read limit closes that viewer's connection
// cleanly; the session does not notice.
func TestWebHugeMessageRefused(t *testing.T) {
	w := e2e.NewWebEnv(t)
	id := strings.TrimSpace(w.MustTk("new", "--name", "big", "--", "cat"))
	v := w.DialViewer("/ws/sessions/big?from=-1")
	v.Until("welcome", e2e.IsType(wire.TypeWelcome))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Valid frames (acks, which a viewer may send and the host ignores),
	// so it is the size that is refused, not the content.
	var big bytes.Buffer
	fw := wire.NewWriter(&big)
	for big.Len() < 3<<20 {
		fw.Uint64(wire.TypeAck, 0)
	}
	v.C.Write(ctx, websocket.MessageBinary, big.Bytes())
	for range v.Frames {
	}
	v.Mu.Lock()
	err := v.Err
	v.Mu.Unlock()
	// The server closes with StatusMessageTooBig; when it does so while the
	// client is still writing the message, the client may only see its own
	// connection fail. Either way the viewer is gone, and nothing else is.
	if err == nil {
		t.Errorf("the connection survived a %d-byte message", big.Len())
	}
	if st := websocket.CloseStatus(err); st != -1 && st != websocket.StatusMessageTooBig {
		t.Errorf("connection ended with %v, want close status %v", err, websocket.StatusMessageTooBig)
	}
	other := w.DialViewer("/ws/sessions/big?from=-1")
	other.Until("welcome", e2e.IsType(wire.TypeWelcome))
	if s := w.Session(id); s.State != "running" {
		t.Errorf("session after the refused message: %+v", s)
	}
}

// The event stream on the TCP listener carries every event in order as
// Server-Sent Events, resumes with Last-Event-ID, and `termkeep events`
// prints the same history.
func TestWebEventStream(t *testing.T) {
	w := e2e.NewWebEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", w.Base+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+w.Token)
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
	id := strings.TrimSpace(w.MustTk("new", "--name", "ex", "--", "sh", "-c", "read x; exit 3"))
	s, err := w.C.Attach(ctx, id, wire.Hello{Role: wire.RoleViewer, From: 0})
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
	req, _ = http.NewRequestWithContext(ctx, "GET", w.Base+"/api/events?follow=0", nil)
	req.Header.Set("Authorization", "Bearer "+w.Token)
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
	table := w.MustTk("events")
	for _, k := range want {
		if !strings.Contains(table, k) {
			t.Errorf("`termkeep events` lacks %s:\n%s", k, table)
		}
	}
	if !strings.Contains(table, "exit_code=3") {
		t.Errorf("`termkeep events` lacks the exit code:\n%s", table)
	}
	viewers := strings.Split(strings.TrimSpace(w.MustTk("events", "--type", "viewer")), "\n")
	for _, l := range viewers[1:] {
		if !strings.Contains(l, " viewer.") {
			t.Errorf("`termkeep events --type viewer` printed %q", l)
		}
	}
	if len(viewers) < 2 {
		t.Errorf("`termkeep events --type viewer` printed no viewer event")
	}
	cliKinds, _ := w.SessionEvents(id)
	if strings.Join(cliKinds, " ") != strings.Join(kinds, " ") {
		t.Errorf("events --json %v, stream %v", cliKinds, kinds)
	}
}

// `termkeep url` prints the address with the token in its fragment;
// `termkeep serve` said where to find it; opening it sends no token and
// sets no cookie.
func TestWebURL(t *testing.T) {
	w := e2e.NewWebEnv(t)
	u := strings.TrimSpace(w.MustTk("url"))
	if u != w.Base+"/#token="+w.Token {
		t.Fatalf("termkeep url = %q, want %s/#token=%s", u, w.Base, w.Token)
	}
	// Its output is not a terminal here: it says where the address is,
	// and never writes the token to its log (TestSecurityTokenNotLogged).
	log, _ := os.ReadFile(filepath.Join(w.Dir, "server.log"))
	if !strings.Contains(string(log), "`"+e2e.TkBin+" url` prints") { // named as it was run

		t.Errorf("serve did not say how to get the address:\n%s", log)
	}
	if strings.Contains(string(log), w.Token) {
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
	e := e2e.NewEnv(t)
	if _, errs, code := e.Tk("url"); code != 1 || !strings.Contains(errs, "termkeep serve") {
		t.Errorf("termkeep url with no server: exit %d, %q", code, errs)
	}
}
