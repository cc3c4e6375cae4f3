package security

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
	"termkeep/internal/wire"
)

// signIn swaps secret for a browser credential, as the page does.
func signIn(w *e2e.WebEnv, secret string) api.BrowserSignIn {
	w.T.Helper()
	code, b := w.Do("POST", "/api/browser-sessions", e2e.Bearer(secret), nil)
	var out api.BrowserSignIn
	if err := json.Unmarshal(b, &out); code != http.StatusCreated || err != nil || out.Credential == "" {
		w.T.Fatalf("sign in: %d %s", code, b)
	}
	return out
}

// dialStatus tries a WebSocket viewer with auth and returns the handshake's
// status (101 when it was accepted; the connection is then closed).
func dialStatus(w *e2e.WebEnv, path, auth string, protocols ...string) int {
	w.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := http.Header{}
	if auth != "" {
		h.Set("Authorization", auth)
	}
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(w.Base, "http")+path, &websocket.DialOptions{HTTPHeader: h, Subprotocols: protocols})
	if err == nil {
		c.CloseNow()
		return http.StatusSwitchingProtocols
	}
	if resp == nil {
		w.T.Fatalf("dial %s: %v", path, err)
	}
	return resp.StatusCode
}

func list(w *e2e.WebEnv, secret string) []api.Session {
	w.T.Helper()
	var out []api.Session
	w.As(secret).API("GET", "/api/sessions", nil, 200, &out)
	return out
}

func ids(list []api.Session) string {
	var out []string
	for _, s := range list {
		out = append(out, refOf(s))
	}
	return strings.Join(out, " ")
}

func refOf(s api.Session) string {
	if s.Name != "" {
		return s.Name
	}
	return s.ID
}

// expectNothingChanged checks that the owner still sees exactly the
// sessions want, each running.
func expectRunning(w *e2e.WebEnv, want ...string) {
	w.T.Helper()
	got := list(w, w.Token)
	if ids(got) != strings.Join(want, " ") {
		w.T.Fatalf("sessions %q, want %q", ids(got), strings.Join(want, " "))
	}
	for _, s := range got {
		if s.State != "running" {
			w.T.Errorf("session %s is %s", refOf(s), s.State)
		}
	}
}

// No token, a wrong one, an expired one and a revoked one are all 401, on
// every kind of request, and change nothing. A token that once worked says
// why it stopped (a code for its page to stop on); every other refusal is
// the same as a wrong token's.
func TestAuthRefusals(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	w := e2e.NewWebEnv(t)
	w.MustTk("new", "--name", "victim", "--", "cat")
	expired := w.NewToken("--expires", "1s", "--name", "short")
	revoked := w.NewToken()
	live := w.NewToken("--expires", "1h")

	// The revoked token works until it is revoked, and its viewer is
	// disconnected then.
	if got := ids(list(w, revoked.Secret)); got != "victim" {
		t.Fatalf("before revocation the token lists %q", got)
	}
	v := w.As(revoked.Secret).DialViewer("/ws/sessions/victim")
	v.Until("welcome", e2e.IsType(wire.TypeWelcome))
	w.MustTk("token", "revoke", revoked.ID)
	for range v.Frames {
	}
	if ids(list(w, live.Secret)) != "victim" {
		t.Fatal("a token with an hour to live does not work")
	}
	time.Sleep(2 * time.Second) // the short token expires

	var states []api.Token
	json.Unmarshal([]byte(w.MustTk("token", "ls", "--json")), &states)
	byID := map[string]string{}
	for _, s := range states {
		byID[s.ID] = s.State
	}
	if byID[expired.ID] != "expired" || byID[revoked.ID] != "revoked" || byID[live.ID] != "active" {
		t.Fatalf("token states %v", byID)
	}

	// The owner's token with its first character changed: "x", unless
	// the random token already starts with one.
	first := "x"
	if strings.HasPrefix(w.Token, first) {
		first = "y"
	}
	// The revoked token with its last character changed, likewise.
	last := "A"
	if strings.HasSuffix(revoked.Secret, last) {
		last = "B"
	}
	refusals := []struct{ what, auth string }{
		{"no token", ""},
		{"a wrong token", e2e.Bearer(first + w.Token[1:])},
		{"a wrong token shaped like a registry token", e2e.Bearer(revoked.Secret[:len(revoked.Secret)-1] + last)},
		{"an expired token", e2e.Bearer(expired.Secret)},
		{"a revoked token", e2e.Bearer(revoked.Secret)},
		{"a malformed header", "Basic " + live.Secret},
	}
	// Each is the same 401 as a wrong token, but for the expired and the
	// revoked one, which say so. (Fewer wrong tokens than the per-address
	// limit; past it, they are 429.)
	var want []byte
	for _, c := range refusals[1:] {
		code, b := w.Do("GET", "/api/sessions", c.auth, nil)
		var e api.Error
		json.Unmarshal(b, &e)
		switch c.what {
		case "an expired token", "a revoked token":
			if code != http.StatusUnauthorized || e.Code != strings.Fields(c.what)[1] {
				t.Errorf("%s: answered %d %s, want 401 with its code", c.what, code, b)
			}
			continue
		}
		if want == nil {
			want = b
		}
		if code != http.StatusUnauthorized || !bytes.Equal(b, want) || e.Code != "" {
			t.Errorf("%s: answered %d %s, want 401 %s", c.what, code, b, want)
		}
	}
	refused := func(code int) bool { return code == http.StatusUnauthorized || code == http.StatusTooManyRequests }
	for _, c := range refusals {
		for _, r := range []struct{ method, path string }{
			{"GET", "/api/sessions"}, {"GET", "/api/sessions/victim"}, {"GET", "/api/events?follow=0"},
			{"GET", "/api/workspaces"}, {"POST", "/api/sessions"}, {"DELETE", "/api/sessions/victim"},
			{"POST", "/api/sessions/victim/kill"}, {"PATCH", "/api/sessions/victim"}, {"POST", "/api/sessions/victim/restore"},
		} {
			var body any
			switch r.method {
			case "POST":
				body = map[string]any{"name": "intruder", "command": []string{"cat"}, "cwd": "/"}
			case "PATCH":
				body = map[string]any{"name": "renamed"}
			}
			code, b := w.Do(r.method, r.path, c.auth, body)
			if !refused(code) || !strings.Contains(string(b), "access token") {
				t.Errorf("%s: %s %s answered %d %s", c.what, r.method, r.path, code, b)
			}
		}
		if code := dialStatus(w, "/ws/sessions/victim", c.auth); !refused(code) {
			t.Errorf("%s: WebSocket viewer answered %d", c.what, code)
		}
	}
	// Nor does a refused token sign a browser in.
	for _, secret := range []string{expired.Secret, revoked.Secret, "nope"} {
		if code, b := w.Do("POST", "/api/browser-sessions", e2e.Bearer(secret), nil); !refused(code) {
			t.Errorf("signing in with a refused token: %d %s", code, b)
		}
	}
	expectRunning(w, "victim")
}

// A user sees only its own sessions; another user's answer 404 exactly as
// one that does not exist, for every path, and is left alone.
func TestAuthUserIsolation(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	w := e2e.NewWebEnv(t)
	w.MustTk("user", "add", "alice")
	w.MustTk("user", "add", "bob")
	alice := w.NewToken("--user", "alice")
	bob := w.NewToken("--user", "bob")
	w.MustTk("new", "--name", "owners", "--", "cat")

	var a1 api.Session
	w.As(alice.Secret).API("POST", "/api/sessions", map[string]any{"name": "a1", "command": []string{"cat"}, "cwd": "/"}, 201, &a1)
	if a1.Owner != "alice" {
		t.Fatalf("alice's session is owned by %q", a1.Owner)
	}
	if got := ids(list(w, alice.Secret)); got != "a1" {
		t.Errorf("alice lists %q, want only a1", got)
	}
	if got := ids(list(w, bob.Secret)); got != "" {
		t.Errorf("bob lists %q, want nothing", got)
	}
	if got := ids(list(w, w.Token)); got != "owners a1" {
		t.Errorf("the owner lists %q, want every session", got)
	}

	// The answer for a session bob may not see is the answer for one that
	// does not exist, byte for byte but for the name.
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/sessions/%s"}, {"DELETE", "/api/sessions/%s"}, {"DELETE", "/api/sessions/%s?force=1"},
		{"POST", "/api/sessions/%s/kill"},
		{"PATCH", "/api/sessions/%s"}, {"POST", "/api/sessions/%s/restore"},
	} {
		var body any
		if r.method == "PATCH" {
			body = map[string]any{"name": "stolen"}
		}
		nCode, nBody := w.Do(r.method, strings.Replace(r.path, "%s", "no-such-one", 1), e2e.Bearer(bob.Secret), body)
		for _, target := range []string{"a1", a1.ID, "owners"} {
			code, b := w.Do(r.method, strings.Replace(r.path, "%s", target, 1), e2e.Bearer(bob.Secret), body)
			if code != http.StatusNotFound || code != nCode ||
				string(b) != strings.Replace(string(nBody), "no-such-one", target, 1) {
				t.Errorf("bob: %s %s answered %d %s; a session that does not exist: %d %s",
					r.method, strings.Replace(r.path, "%s", target, 1), code, b, nCode, nBody)
			}
		}
	}
	for _, target := range []string{"a1", a1.ID, "owners"} {
		if code := dialStatus(w, "/ws/sessions/"+target, e2e.Bearer(bob.Secret)); code != http.StatusNotFound {
			t.Errorf("bob's viewer of %s answered %d", target, code)
		}
	}
	// Nor does alice reach the owner's session.
	if code, _ := w.Do("GET", "/api/sessions/owners", e2e.Bearer(alice.Secret), nil); code != http.StatusNotFound {
		t.Errorf("alice: GET the owner's session answered %d", code)
	}

	// Bob's own session is his, and alice does not see it either.
	var b1 api.Session
	w.As(bob.Secret).API("POST", "/api/sessions", map[string]any{"name": "b1", "command": []string{"cat"}, "cwd": "/"}, 201, &b1)
	if got := ids(list(w, alice.Secret)); got != "a1" {
		t.Errorf("alice lists %q after bob made b1", got)
	}

	// The event stream carries only the sessions one sees.
	for _, c := range []struct {
		secret string
		sees   []string
		hidden []string
	}{{alice.Secret, []string{a1.ID}, []string{b1.ID}}, {bob.Secret, []string{b1.ID}, []string{a1.ID}}} {
		_, b := w.Do("GET", "/api/events?follow=0", e2e.Bearer(c.secret), nil)
		for _, id := range c.sees {
			if !strings.Contains(string(b), `"session":"`+id+`"`) {
				t.Errorf("the event stream lacks %s:\n%s", id, b)
			}
		}
		for _, id := range c.hidden {
			if strings.Contains(string(b), id) {
				t.Errorf("the event stream shows another user's session %s:\n%s", id, b)
			}
		}
		if strings.Contains(string(b), "owners") || strings.Contains(string(b), "workspace.") {
			t.Errorf("the event stream shows the owner's:\n%s", b)
		}
	}
	expectRunning(w, "owners", "a1", "b1")
	if s := w.Session("a1"); s.Name != "a1" || s.Owner != "alice" {
		t.Errorf("after bob's attempts a1 is %+v", s)
	}
}

// A read-only token's viewers cannot type or resize, and it cannot change
// anything over REST.
func TestAuthReadOnly(t *testing.T) {
	w := e2e.NewWebEnv(t)
	w.MustTk("user", "add", "alice")
	full := w.NewToken("--user", "alice")
	ro := w.NewToken("--user", "alice", "--read-only")
	var sess api.Session
	w.As(full.Secret).API("POST", "/api/sessions", map[string]any{
		"name": "ro", "command": []string{"cat"}, "cwd": "/", "cols": 80, "rows": 24}, 201, &sess)

	// Even a viewer that asks for control, with a size, is read-only.
	v := w.As(ro.Secret).DialViewer("/ws/sessions/ro?mode=control&cols=120&rows=40")
	v.Until("welcome", e2e.IsType(wire.TypeWelcome))
	if err := v.W.Input([]byte("ro-typed\r")); err != nil {
		t.Fatal(err)
	}
	f := v.Until("error frame for input", e2e.IsType(wire.TypeError))
	if code, msg, _ := wire.ParseError(f.Payload); code != wire.CodeForbidden || !strings.Contains(msg, "read-only") {
		t.Errorf("input answered with %d %q", code, msg)
	}
	// Its window's size is only reported: never refused with an error,
	// never applied.
	if err := v.W.Resize(132, 50); err != nil {
		t.Fatal(err)
	}
	// What the owner types arrives; what the read-only viewer typed did not.
	ctl := w.As(full.Secret).DialViewer("/ws/sessions/ro")
	ctl.Until("welcome", e2e.IsType(wire.TypeWelcome))
	ctl.W.Input([]byte("marker\r"))
	v.Until("the owner's typing", func(f wire.Frame) bool {
		if f.Type == wire.TypeError {
			t.Errorf("the read-only viewer's resize was answered: %q", f.Payload)
		}
		return strings.Contains(v.Text.String(), "marker\r\nmarker")
	})
	ctl.UntilText("marker\r\nmarker")
	if strings.Contains(v.Text.String()+ctl.Text.String(), "ro-typed") {
		t.Error("the read-only viewer's input reached the session")
	}
	if s := w.Session("ro"); s.Cols != 80 || s.Rows != 24 {
		t.Errorf("the read-only viewer resized the session to %dx%d", s.Cols, s.Rows)
	}
	// Its attach is recorded as a viewer in view mode.
	_, evs := w.SessionEvents(sess.ID)
	var d map[string]any
	json.Unmarshal(evs[1].Detail, &d)
	if evs[1].Kind != "viewer.attached" || d["mode"] != "view" {
		t.Errorf("the read-only viewer's attach: %s %s", evs[1].Kind, evs[1].Detail)
	}

	// Every state-changing call is refused, by the token or by the
	// credential of a browser signed in with it.
	cred := signIn(w, ro.Secret).Credential
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/api/sessions", map[string]any{"name": "more", "command": []string{"cat"}, "cwd": "/"}},
		{"DELETE", "/api/sessions/ro", nil},
		{"POST", "/api/sessions/ro/kill", nil},
		{"DELETE", "/api/sessions/ro?force=1", nil},
		{"PATCH", "/api/sessions/ro", map[string]any{"name": "renamed"}},
		{"POST", "/api/sessions/ro/restore", nil},
	} {
		if code, b := w.Do(r.method, r.path, e2e.Bearer(ro.Secret), r.body); code != http.StatusForbidden || !strings.Contains(string(b), "read-only") {
			t.Errorf("bearer: %s %s answered %d %s", r.method, r.path, code, b)
		}
		if code, b := w.Do(r.method, r.path, e2e.Bearer(cred), r.body); code != http.StatusForbidden {
			t.Errorf("browser credential: %s %s answered %d %s", r.method, r.path, code, b)
		}
	}
	expectRunning(w, "ro")
}

// A share link reaches its session only: another is 404, the list has its
// session only, and it creates nothing. Opening it sends the token to no
// server; the browser signs in with it and gets a credential that reaches
// no more than the link.
func TestAuthShareLink(t *testing.T) {
	w := e2e.NewWebEnv(t)
	w.MustTk("new", "--name", "shared", "--", "cat")
	w.MustTk("new", "--name", "private", "--", "cat")
	link := w.NewToken("--session", "shared", "--read-only", "--expires", "2h")
	if link.User == "" || link.Session == "" || link.SessionName != "shared" || !link.ReadOnly || link.ExpiresAt == nil {
		t.Fatalf("share link %+v", link)
	}

	resp, err := e2e.NoRedirect.Get(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The page (or, in a build without the UI, its placeholder), no token
	// needed: no redirect, no cookie.
	if resp.StatusCode/100 == 3 || resp.StatusCode == http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Fatalf("opening the link: %s, cookies %v", resp.Status, resp.Cookies())
	}
	cred := signIn(w, link.Secret)
	code, b := w.Do("GET", "/api/sessions", e2e.Bearer(cred.Credential), nil)
	var list []api.Session
	json.Unmarshal(b, &list)
	if code != 200 || ids(list) != "shared" {
		t.Errorf("the link lists %d %s", code, b)
	}
	for _, auth := range [][]string{{"Authorization", e2e.Bearer(cred.Credential)}, {"Authorization", e2e.Bearer(link.Secret)}} {
		if code, _ := w.Do("GET", "/api/sessions/private", "", nil, auth...); code != http.StatusNotFound {
			t.Errorf("%s: GET another session answered %d", auth[0], code)
		}
		if code, _ := w.Do("GET", "/api/sessions/shared", "", nil, auth...); code != http.StatusOK {
			t.Errorf("%s: GET its session answered %d", auth[0], code)
		}
	}
	if code := dialStatus(w, "/ws/sessions/private", e2e.Bearer(link.Secret)); code != http.StatusNotFound {
		t.Errorf("a viewer of another session answered %d", code)
	}
	v := w.As(link.Secret).DialViewer("/ws/sessions/shared")
	v.Until("welcome", e2e.IsType(wire.TypeWelcome))

	// A share link that may type still creates nothing.
	ctl := w.NewToken("--session", "shared")
	if code, b := w.Do("POST", "/api/sessions", e2e.Bearer(ctl.Secret),
		map[string]any{"name": "extra", "command": []string{"cat"}, "cwd": "/"}); code != http.StatusForbidden {
		t.Errorf("create with a share link answered %d %s", code, b)
	}
	if code, _ := w.Do("POST", "/api/sessions/private/kill", e2e.Bearer(ctl.Secret), nil); code != http.StatusNotFound {
		t.Errorf("killing another session with a share link answered %d", code)
	}
	if code, _ := w.Do("DELETE", "/api/sessions/private?force=1", e2e.Bearer(ctl.Secret), nil); code != http.StatusNotFound {
		t.Errorf("removing another session with a share link answered %d", code)
	}
	expectRunning(w, "shared", "private")
}

// A workspace token reaches the sessions of its workspace, and creates
// sessions there only.
func TestAuthWorkspaceToken(t *testing.T) {
	w := e2e.NewWebEnv(t)
	w.MustTk("new", "--name", "in-a", "--workspace", "wa", "--", "cat")
	w.MustTk("new", "--name", "in-b", "--workspace", "wb", "--", "cat")
	w.MustTk("new", "--name", "loose", "--", "cat")
	tok := w.NewToken("--workspace", "wa")

	if got := ids(list(w, tok.Secret)); got != "in-a" {
		t.Errorf("the workspace token lists %q", got)
	}
	for _, target := range []string{"in-b", "loose"} {
		if code, _ := w.Do("GET", "/api/sessions/"+target, e2e.Bearer(tok.Secret), nil); code != http.StatusNotFound {
			t.Errorf("GET %s answered %d", target, code)
		}
		if code := dialStatus(w, "/ws/sessions/"+target, e2e.Bearer(tok.Secret)); code != http.StatusNotFound {
			t.Errorf("viewer of %s answered %d", target, code)
		}
	}
	var made api.Session
	w.As(tok.Secret).API("POST", "/api/sessions", map[string]any{"name": "new-a", "command": []string{"cat"}, "cwd": "/"}, 201, &made)
	if made.Workspace != "wa" {
		t.Errorf("a session the workspace token made is in %q", made.Workspace)
	}
	if code, b := w.Do("POST", "/api/sessions", e2e.Bearer(tok.Secret),
		map[string]any{"name": "sneak", "command": []string{"cat"}, "cwd": "/", "workspace": "wb"}); code != http.StatusForbidden {
		t.Errorf("create in another workspace answered %d %s", code, b)
	}
	var wss []api.Workspace
	w.As(tok.Secret).API("GET", "/api/workspaces", nil, 200, &wss)
	if len(wss) != 1 || wss[0].Name != "wa" || wss[0].Sessions != 2 {
		t.Errorf("the workspace token's workspaces: %+v", wss)
	}
	expectRunning(w, "in-a", "in-b", "loose", "new-a")
}

// The CLI: users, tokens listed without secrets, and the refusals a user
// can meet.
func TestAuthTokenCLI(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	w := e2e.NewWebEnv(t)
	if out := w.MustTk("user", "add", "alice"); strings.TrimSpace(out) != "alice" {
		t.Errorf("user add printed %q", out)
	}
	if _, errs, code := w.Tk("user", "add", "alice"); code != 1 || !strings.Contains(errs, "already exists") {
		t.Errorf("adding alice twice: exit %d %q", code, errs)
	}
	if _, errs, code := w.Tk("user", "add", "no/slash"); code != 1 || !strings.Contains(errs, "not allowed") {
		t.Errorf("a bad user name: exit %d %q", code, errs)
	}
	var users []api.User
	json.Unmarshal([]byte(w.MustTk("user", "ls", "--json")), &users)
	if len(users) != 2 || !users[0].Owner || users[1].Name != "alice" {
		t.Fatalf("user ls: %+v", users)
	}
	if _, errs, code := w.Tk("user", "add", users[0].Name); code != 1 || !strings.Contains(errs, "owner") {
		t.Errorf("adding the owner: exit %d %q", code, errs)
	}

	out := w.MustTk("token", "create", "--user", "alice", "--name", "laptop", "--expires", "7d")
	var secret, url string
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "secret:"); ok {
			secret = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "url:"); ok {
			url = strings.TrimSpace(v)
		}
	}
	if len(secret) < 40 || url != w.Base+"/#token="+secret {
		t.Fatalf("token create printed:\n%s", out)
	}
	table := w.MustTk("token", "ls")
	if strings.Contains(table, secret) || !strings.Contains(table, "laptop") || !strings.Contains(table, "alice") {
		t.Errorf("token ls:\n%s", table)
	}
	js := w.MustTk("token", "ls", "--json")
	if strings.Contains(js, secret) {
		t.Errorf("token ls --json shows the secret:\n%s", js)
	}
	// Using it is recorded.
	list(w, secret)
	var toks []api.Token
	json.Unmarshal([]byte(w.MustTk("token", "ls", "--json")), &toks)
	if len(toks) != 1 || toks[0].LastUsedAt == nil || toks[0].ExpiresAt == nil || toks[0].State != "active" {
		t.Errorf("token ls after use: %+v", toks)
	}

	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--user", "nobody"}, 1, "termkeep user add nobody"},
		{[]string{"--session", "nope"}, 1, "no session"},
		{[]string{"--workspace", "nope"}, 1, "no workspace"},
		{[]string{"--session", "a", "--workspace", "b"}, 2, "not both"},
		{[]string{"--expires", "soon"}, 2, "not a lifetime"},
	} {
		if _, errs, code := w.Tk(append([]string{"token", "create"}, c.args...)...); code != c.code || !strings.Contains(errs, c.says) {
			t.Errorf("token create %v: exit %d %q, want %d and %q", c.args, code, errs, c.code, c.says)
		}
	}
	// A session of alice's is shared as alice's; one of the owner's
	// cannot be given to alice.
	w.MustTk("new", "--name", "mine", "--", "cat")
	if _, errs, code := w.Tk("token", "create", "--user", "alice", "--session", "mine"); code != 1 || !strings.Contains(errs, "belongs to") {
		t.Errorf("a token of alice for the owner's session: exit %d %q", code, errs)
	}
	if _, errs, code := w.Tk("token", "revoke", "nope"); code != 1 || !strings.Contains(errs, "no token") {
		t.Errorf("revoking an unknown token: exit %d %q", code, errs)
	}
	if _, errs, code := w.Tk("token", "revoke", toks[0].ID); code != 0 {
		t.Errorf("revoke: exit %d %q", code, errs)
	}
	if code, _ := w.Do("GET", "/api/sessions", e2e.Bearer(secret), nil); code != http.StatusUnauthorized {
		t.Errorf("a revoked token answered %d", code)
	}
}

// After a whole session of use, no registry token's secret is anywhere in
// the state directory (registry, logs, server log), and the owner token only
// in its own file and on the line `termkeep serve` prints it.
func TestAuthSecretsNotStored(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	w := e2e.NewWebEnv(t)
	w.MustTk("user", "add", "alice")
	full := w.NewToken("--user", "alice", "--name", "everyday")
	ro := w.NewToken("--user", "alice", "--read-only", "--expires", "1h")
	w.As(full.Secret).API("POST", "/api/sessions", map[string]any{"name": "work", "command": []string{"cat"}, "cwd": "/"}, 201, nil)
	link := w.NewToken("--session", "work", "--read-only")
	short := w.NewToken("--user", "alice", "--expires", "1s")

	var secrets []string
	for _, tk := range []api.TokenCreated{full, ro, link, short} {
		secrets = append(secrets, tk.Secret)
		// Open the address, sign a browser in and use its credential,
		// use the bearer header, try a refused call, open a viewer.
		resp, err := e2e.NoRedirect.Get(tk.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		w.Do("GET", "/?token="+tk.Secret, "", nil)
		if code, b := w.Do("POST", "/api/browser-sessions", e2e.Bearer(tk.Secret), nil); code == http.StatusCreated {
			var in api.BrowserSignIn
			json.Unmarshal(b, &in)
			secrets = append(secrets, in.Credential)
			w.Do("GET", "/api/sessions", e2e.Bearer(in.Credential), nil)
			dialStatus(w, "/ws/sessions/work?from=-1", "", "termkeep.v1", "termkeep.auth."+in.Credential)
		}
		w.Do("GET", "/api/sessions", "", nil, "Cookie", "termkeep_token="+tk.Secret)
		w.Do("GET", "/api/sessions/work", e2e.Bearer(tk.Secret), nil)
		w.Do("DELETE", "/api/sessions/nope", e2e.Bearer(tk.Secret), nil)
		w.Do("GET", "/api/sessions?token="+tk.Secret, e2e.Bearer(tk.Secret), nil)
		w.Do("GET", "/api/events?follow=0", e2e.Bearer(tk.Secret), nil)
		dialStatus(w, "/ws/sessions/work?from=-1", e2e.Bearer(tk.Secret))
		dialStatus(w, "/ws/sessions/work?token="+tk.Secret, "")
	}
	time.Sleep(2 * time.Second)
	w.Do("GET", "/api/sessions", e2e.Bearer(short.Secret), nil) // expired
	w.MustTk("token", "revoke", ro.ID)
	w.Do("GET", "/api/sessions", e2e.Bearer(ro.Secret), nil) // revoked
	w.MustTk("token", "ls")
	w.MustTk("user", "ls")
	// The owner token, used the same ways.
	w.Do("GET", "/api/sessions?token="+w.Token, e2e.Bearer(w.Token), nil)
	w.Do("DELETE", "/api/sessions/nope", e2e.Bearer(w.Token), nil)
	// Stop the server, so everything it would write is written.
	w.MustTk("shutdown")
	w.Srv.Wait()

	found := false
	err := filepath.WalkDir(w.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		found = found || strings.HasSuffix(p, ".db")
		for i, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("token %d's secret is in %s", i, p)
			}
		}
		n := bytes.Count(b, []byte(w.Token))
		switch rel, _ := filepath.Rel(w.Dir, p); rel {
		case "token":
			if n != 1 {
				t.Errorf("the owner token file holds the token %d times", n)
			}
		default:
			if n != 0 {
				t.Errorf("the owner token is in %s", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("no registry file under %s", w.Dir)
	}
}

// Removing a user: refused while it owns running sessions, with a sentence
// saying how many and how to end them; --force closes them, revokes every
// token of the user (its requests in flight end, its secrets answer 401)
// and records it all. Its ended sessions stay listed for the owner. An
// unknown user and the owner cannot be removed.
func TestAuthUserRemove(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	w := e2e.NewWebEnv(t)
	w.MustTk("user", "add", "alice")
	tok := w.NewToken("--user", "alice", "--name", "laptop")
	alice := w.As(tok.Secret)
	var run, done api.Session
	alice.API("POST", "/api/sessions", map[string]any{"name": "alice-run", "command": []string{"cat"}, "cwd": "/"}, 201, &run)
	alice.API("POST", "/api/sessions", map[string]any{"name": "alice-done", "command": []string{"cat"}, "cwd": "/"}, 201, &done)
	w.MustTk("kill", "alice-done")
	link := w.NewToken("--session", "alice-run", "--read-only")

	_, errs, code := w.Tk("user", "rm", "alice")
	if code != 1 || !strings.Contains(errs, "user alice owns 1 running session (alice-run): end it with `termkeep kill SESSION`") ||
		!strings.Contains(errs, "`termkeep user rm alice --force`") {
		t.Errorf("user rm of a user with a running session: exit %d %q", code, errs)
	}
	if got := ids(list(w, tok.Secret)); got != "alice-run alice-done" {
		t.Fatalf("after a refused removal alice lists %q", got)
	}
	_, errs, code = w.Tk("user", "rm", "nobody")
	if code != 1 || errs != "termkeep: no user \"nobody\" (see `termkeep user ls`)\n" {
		t.Errorf("user rm of an unknown user: exit %d %q", code, errs)
	}
	var users []api.User
	json.Unmarshal([]byte(w.MustTk("user", "ls", "--json")), &users)
	if _, errs, code := w.Tk("user", "rm", users[0].Name, "--force"); code != 1 || !strings.Contains(errs, "is the owner") {
		t.Errorf("user rm of the owner: exit %d %q", code, errs)
	}

	// alice's event stream and her share link's viewer are in flight when
	// she goes.
	streamDone := make(chan struct{})
	req, _ := http.NewRequest("GET", w.Base+"/api/events", nil)
	req.Header.Set("Authorization", e2e.Bearer(tok.Secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("alice's event stream: %v %v", resp, err)
	}
	go func() {
		defer close(streamDone)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	v := w.As(link.Secret).DialViewer("/ws/sessions/alice-run")
	v.Until("welcome", e2e.IsType(wire.TypeWelcome))

	out, errs, code := w.Tk("user", "rm", "alice", "--force")
	if code != 0 || out != "alice\n" || !strings.Contains(errs, "revoked 2 tokens") || !strings.Contains(errs, "closed 1 session ("+run.ID+")") {
		t.Fatalf("user rm --force: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	select {
	case <-streamDone:
	case <-time.After(10 * time.Second):
		t.Error("alice's event stream goes on after her removal")
	}
	for range v.Frames {
	}
	for _, secret := range []string{tok.Secret, link.Secret} {
		if code, _ := w.Do("GET", "/api/sessions", e2e.Bearer(secret), nil); code != http.StatusUnauthorized {
			t.Errorf("a token of a removed user answered %d", code)
		}
	}
	if got := w.Session(run.ID); got.State != "closed" || got.Owner != "alice" {
		t.Errorf("alice's running session after user rm --force: %s, owner %q", got.State, got.Owner)
	}
	if got := ids(list(w, w.Token)); got != "alice-run alice-done" {
		t.Errorf("the owner lists %q after alice's removal", got)
	}
	users = nil
	json.Unmarshal([]byte(w.MustTk("user", "ls", "--json")), &users)
	if len(users) != 1 || !users[0].Owner {
		t.Errorf("user ls after the removal: %+v", users)
	}
	var toks []api.Token
	json.Unmarshal([]byte(w.MustTk("token", "ls", "--json")), &toks)
	for _, tk := range toks {
		if tk.State != api.TokenRevoked {
			t.Errorf("token %s of the removed user is %s", tk.ID, tk.State)
		}
	}

	// Tokens made and revoked, and the removal, are in the history.
	mine := w.NewToken("--name", "scratch")
	w.MustTk("token", "revoke", mine.ID)
	w.MustTk("token", "revoke", mine.ID) // changes nothing: no second event
	_, evs := w.SessionEvents("")
	var got []string
	for _, ev := range evs {
		var d map[string]any
		json.Unmarshal(ev.Detail, &d)
		line := ev.Kind
		switch ev.Kind {
		case "user.added", "user.removed":
			line += " " + fmt.Sprint(d["user"])
		case "token.created", "token.revoked":
			line += " " + fmt.Sprint(d["token"]) + " " + fmt.Sprint(d["user"])
		default:
			continue
		}
		if ev.Kind == "user.removed" {
			line += fmt.Sprintf(" tokens=%v sessions=%v", d["tokens"], d["sessions"])
		}
		got = append(got, line)
	}
	pair := []string{tok.ID, link.ID}
	slices.Sort(pair)
	want := []string{
		"user.added alice",
		"token.created " + tok.ID + " alice",
		"token.created " + link.ID + " alice",
		fmt.Sprintf("user.removed alice tokens=[%s %s] sessions=[%s]", pair[0], pair[1], run.ID),
		"token.created " + mine.ID + " " + users[0].Name,
		"token.revoked " + mine.ID + " " + users[0].Name,
	}
	if !slices.Equal(got, want) {
		t.Errorf("access events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A browser's credential on a real session: its viewer connects with the
// credential among its subprotocols and types; `termkeep token ls
// --browsers` lists it, never with its secret; `termkeep token revoke`
// signs it out and its viewer ends at once; a browser signed in with a
// user's token is signed out when the token is revoked.
func TestAuthBrowserCredential(t *testing.T) {
	e2e.SkipShort(t)
	w := e2e.NewWebEnv(t)
	w.MustTk("new", "--name", "work", "--", "cat")
	if out, errs, code := w.Tk("token", "ls", "--browsers"); code != 0 || out != "" || !strings.Contains(errs, "termkeep url") {
		t.Errorf("token ls --browsers with none: exit %d %q %q", code, out, errs)
	}
	in := signIn(w, w.Token)
	viewer := func(cred string) *e2e.WSViewer {
		v := w.DialViewerWith("/ws/sessions/work", &websocket.DialOptions{Subprotocols: []string{"termkeep.v1", "termkeep.auth." + cred}})
		if p := v.C.Subprotocol(); p != "termkeep.v1" {
			t.Errorf("the server selected %q", p)
		}
		v.Until("welcome", e2e.IsType(wire.TypeWelcome))
		return v
	}
	v := viewer(in.Credential)
	v.W.Input([]byte("typed-by-browser\r"))
	v.UntilText("typed-by-browser\r\ntyped-by-browser")

	table := w.MustTk("token", "ls", "--browsers")
	if !strings.Contains(table, in.ID) || !strings.Contains(table, "owner token") || !strings.Contains(table, "active") || strings.Contains(table, in.Credential) {
		t.Errorf("token ls --browsers:\n%s", table)
	}
	var list []api.BrowserSession
	js := w.MustTk("token", "ls", "--browsers", "--json")
	if json.Unmarshal([]byte(js), &list); len(list) != 1 || list[0].ID != in.ID || strings.Contains(js, in.Credential) {
		t.Errorf("token ls --browsers --json: %s", js)
	}
	if out := w.MustTk("token", "revoke", in.ID); strings.TrimSpace(out) != in.ID {
		t.Errorf("token revoke %s printed %q", in.ID, out)
	}
	untilClosed(v)
	if code, _ := w.Do("GET", "/api/me", e2e.Bearer(in.Credential), nil); code != http.StatusUnauthorized {
		t.Errorf("a signed-out browser answered %d", code)
	}
	if code := dialStatus(w, "/ws/sessions/work", "", "termkeep.v1", "termkeep.auth."+in.Credential); code != http.StatusUnauthorized {
		t.Errorf("a signed-out browser's viewer answered %d", code)
	}
	if _, errs, code := w.Tk("token", "revoke", "b-nothing1"); code != 1 || !strings.Contains(errs, "no signed-in browser") {
		t.Errorf("revoking an unknown browser: exit %d %q", code, errs)
	}

	// Through a token: revoking the token signs its browsers out.
	tok := w.NewToken("--name", "phone")
	in2 := signIn(w, tok.Secret)
	v2 := viewer(in2.Credential)
	if table := w.MustTk("token", "ls", "--browsers"); !strings.Contains(table, "token "+tok.ID+" (phone)") {
		t.Errorf("token ls --browsers does not say which token:\n%s", table)
	}
	w.MustTk("token", "revoke", tok.ID)
	untilClosed(v2)
	json.Unmarshal([]byte(w.MustTk("token", "ls", "--browsers", "--json")), &list)
	if len(list) != 2 || list[0].State != "revoked" || list[1].State != "revoked" {
		t.Errorf("after revoking both: %+v", list)
	}
	expectRunning(w, "work")
}

// untilClosed waits for the server to end the viewer's connection.
func untilClosed(v *e2e.WSViewer) {
	v.T.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case _, ok := <-v.Frames:
			if !ok {
				return
			}
		case <-timeout:
			v.T.Fatal("the viewer's connection is still open 20 s later")
		}
	}
}
