package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/store"
	"termkeep/internal/testclock"
)

// signIn swaps secret for a browser credential as a page does.
func (ts *testServer) signIn(secret string) api.BrowserSignIn {
	ts.t.Helper()
	var out api.BrowserSignIn
	b := expectStatus(ts.t, ts.do("POST", "/api/browser-sessions", "", nil, "Authorization", "Bearer "+secret, "User-Agent", "TestBrowser/1.0\u200b \u202e[31m"), http.StatusCreated)
	if err := json.Unmarshal(b, &out); err != nil {
		ts.t.Fatal(err)
	}
	return out
}

func bearer(secret string) []string { return []string{"Authorization", "Bearer " + secret} }

// dialWS opens a viewer WebSocket the way a page does: the credential
// among the subprotocols.
func (ts *testServer) dialWS(ctx context.Context, path string, protocols ...string) (*websocket.Conn, *http.Response, error) {
	return websocket.Dial(ctx, strings.Replace(ts.base, "http", "ws", 1)+path, &websocket.DialOptions{
		Subprotocols: protocols, HTTPHeader: http.Header{"Origin": {ts.base}},
	})
}

// A browser credential's whole life on the listener: made from a token,
// used as a bearer and in a WebSocket's subprotocols, idle expiry with the
// clock moved, sign out, and revocation through the token it came from.
func TestBrowserCredentialLifecycle(t *testing.T) {
	clk := testclock.New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	mine := endedSession("aaaaaaaa", "alices")
	mine.Owner = "alice"
	ts := newTestServerAt(t, "127.0.0.1:0", clk.Now, mine, endedSession("oooooooo", "owners"))
	st, ctx := ts.srv.store, context.Background()

	own := ts.signIn(ts.token)
	if !strings.HasPrefix(own.Credential, browserSecretPrefix) || len(own.Credential) != len(browserSecretPrefix)+43 ||
		!strings.HasPrefix(own.ID, browserIDPrefix) || own.From != "owner" || own.State != api.TokenActive ||
		own.Label != "TestBrowser/1.0 [31m" || !own.ExpiresAt.Equal(clk.Now().Add(store.BrowserIdle)) {
		t.Fatalf("signed in: %+v", own)
	}
	if c, err := st.BrowserCred(ctx, own.ID); err != nil || !c.Owner {
		t.Fatalf("registry: %+v, %v", c, err)
	}
	var list []api.Session
	json.Unmarshal(expectStatus(t, ts.do("GET", "/api/sessions", "", nil, bearer(own.Credential)...), 200), &list)
	if len(list) != 2 {
		t.Errorf("the owner's browser lists %d sessions", len(list))
	}
	// A credential does not make another, and a wrong one is a wrong token.
	expectJSONError(t, ts.do("POST", "/api/browser-sessions", "", nil, bearer(own.Credential)...), 403, "browser credential already")
	expectJSONError(t, ts.do("GET", "/api/sessions", "", nil, bearer(own.Credential+"x")...), 401, "termkeep url")
	expectStatus(t, ts.do("POST", "/api/browser-sessions", "", nil), 401)

	// WebSocket: the credential next to termkeep.v1, which alone is selected.
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c, resp, err := ts.dialWS(wctx, "/ws/sessions/owners", WSProtocol, WSAuthPrefix+own.Credential)
	if err != nil {
		t.Fatalf("WebSocket with the credential: %v %v", err, resp)
	}
	if got := resp.Header.Values("Sec-WebSocket-Protocol"); len(got) != 1 || got[0] != WSProtocol || c.Subprotocol() != WSProtocol {
		t.Errorf("selected %q", got)
	}
	c.CloseNow()
	for _, offer := range [][]string{
		{WSAuthPrefix + own.Credential},                   // no protocol spoken
		{WSProtocol, WSAuthPrefix + ts.token},             // a token is not a browser credential
		{WSProtocol, WSAuthPrefix + own.Credential + "x"}, // wrong
		{WSProtocol},
	} {
		if _, resp, err := ts.dialWS(wctx, "/ws/sessions/owners", offer...); err == nil || resp == nil || resp.StatusCode != 401 {
			t.Errorf("WebSocket offering %q: %v %v, want 401", offer, err, resp)
		}
	}

	// 14 days unused: expired. Used on day 13, it lasts 14 more.
	clk.Advance(13 * 24 * time.Hour)
	expectStatus(t, ts.do("GET", "/api/me", "", nil, bearer(own.Credential)...), 200)
	clk.Advance(13 * 24 * time.Hour)
	expectStatus(t, ts.do("GET", "/api/me", "", nil, bearer(own.Credential)...), 200)
	clk.Advance(store.BrowserIdle)
	expectJSONError(t, ts.do("GET", "/api/me", "", nil, bearer(own.Credential)...), 401, "termkeep url")
	var all []api.BrowserSession
	json.Unmarshal(expectStatus(t, ts.do("GET", "/api/browser-sessions", "bearer", nil), 200), &all)
	if len(all) != 1 || all[0].State != api.TokenExpired {
		t.Errorf("after 14 days unused: %+v", all)
	}

	// A user's read-only link: it signs in and out, sees its own sign-ins
	// only, and changes nothing else.
	if err := st.CreateUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	const roSecret = "alice-read-only-0123456789abcdef"
	if _, err := st.CreateToken(ctx, store.Token{ID: "t-ro", User: "alice", ReadOnly: true}, roSecret); err != nil {
		t.Fatal(err)
	}
	const aliceSecret = "alice-full-0123456789abcdef0123"
	if _, err := st.CreateToken(ctx, store.Token{ID: "t-alice", User: "alice"}, aliceSecret); err != nil {
		t.Fatal(err)
	}
	ro := ts.signIn(roSecret)
	ro2 := ts.signIn(roSecret)
	al := ts.signIn(aliceSecret)
	if ro.From != "t-ro" || ro.User != "alice" {
		t.Errorf("read-only sign-in %+v", ro)
	}
	var me api.Me
	json.Unmarshal(expectStatus(t, ts.do("GET", "/api/me", "", nil, bearer(ro.Credential)...), 200), &me)
	if me.User != "alice" || !me.ReadOnly || me.Owner {
		t.Errorf("the read-only browser is %+v", me)
	}
	expectJSONError(t, ts.do("POST", "/api/sessions", "", map[string]any{"cwd": "/"}, bearer(ro.Credential)...), 403, "read-only")
	var seen []api.BrowserSession
	json.Unmarshal(expectStatus(t, ts.do("GET", "/api/browser-sessions", "", nil, bearer(ro.Credential)...), 200), &seen)
	if len(seen) != 2 || seen[0].Current == seen[1].Current || (seen[0].ID == ro.ID) != seen[0].Current ||
		(seen[0].ID != ro.ID && seen[0].ID != ro2.ID) || (seen[1].ID != ro.ID && seen[1].ID != ro2.ID) {
		t.Errorf("the read-only browser sees %+v", seen)
	}
	// Another token's sign-in is not its to see or revoke.
	expectStatus(t, ts.do("DELETE", "/api/browser-sessions/"+al.ID, "", nil, bearer(ro.Credential)...), 404)
	expectStatus(t, ts.do("DELETE", "/api/browser-sessions/"+own.ID, "", nil, bearer(ro.Credential)...), 404)

	// Sign out ends the credential and its event stream at once.
	sctx, scancel := context.WithTimeout(ctx, 20*time.Second)
	defer scancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", ts.base+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+ro2.Credential)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("event stream: %v %v", err, stream)
	}
	ended := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, stream.Body); ended <- err }()
	expectStatus(t, ts.do("DELETE", "/api/browser-sessions/"+ro2.ID, "", nil, bearer(ro2.Credential)...), 200)
	select {
	case <-ended:
	case <-sctx.Done():
		t.Fatal("the event stream of a signed-out browser is still open")
	}
	stream.Body.Close()
	expectJSONError(t, ts.do("GET", "/api/me", "", nil, bearer(ro2.Credential)...), 401, "termkeep url")
	expectStatus(t, ts.do("GET", "/api/me", "", nil, bearer(ro.Credential)...), 200)

	// Revoking the token revokes what was made from it; so does removing
	// the user (over the unix socket, as `termkeep token revoke` and
	// `termkeep user rm` do).
	cl := client.New(ts.dir)
	if _, err := cl.RevokeToken(ctx, "t-ro"); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, ts.do("GET", "/api/me", "", nil, bearer(ro.Credential)...), 401)
	expectStatus(t, ts.do("GET", "/api/me", "", nil, bearer(al.Credential)...), 200)
	if _, err := cl.RemoveUser(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, ts.do("GET", "/api/me", "", nil, bearer(al.Credential)...), 401)

	// The owner's list over the unix socket, and revoking by id.
	got, err := cl.BrowserSessions(ctx)
	if err != nil || len(got) != 4 {
		t.Fatalf("BrowserSessions = %+v, %v", got, err)
	}
	for _, b := range got {
		if b.State == api.TokenActive {
			t.Errorf("still active: %+v", b)
		}
	}
	if _, err := cl.RevokeBrowserSession(ctx, "b-nothing"); err == nil || !strings.Contains(err.Error(), "token ls --browsers") {
		t.Errorf("revoking an unknown one: %v", err)
	}
	var events []api.Event
	cl.Events(ctx, 0, false, func(e api.Event) error { events = append(events, e); return nil })
	var signedIn, revoked int
	for _, e := range events {
		switch e.Kind {
		case store.EventBrowserSignedIn:
			signedIn++
		case store.EventBrowserRevoked:
			revoked++
		}
		for _, secret := range []string{own.Credential, ro.Credential, ro2.Credential, al.Credential} {
			if strings.Contains(string(e.Detail), secret) {
				t.Errorf("event %s holds a credential", e.Kind)
			}
		}
	}
	if signedIn != 4 || revoked != 1 {
		t.Errorf("%d browser.signed_in and %d browser.revoked events, want 4 and 1", signedIn, revoked)
	}
	for _, secret := range []string{own.Credential, ro.Credential, al.Credential} {
		if strings.Contains(ts.logs.String(), secret) {
			t.Error("the log holds a browser credential")
		}
	}
	if !errors.Is(ctx.Err(), nil) {
		t.Fatal(ctx.Err())
	}
}

// A browser signed in with the owner token is signed out when that token
// is replaced (its file removed, so the next server makes a new one); one
// signed in before a restart with the same token stays signed in.
func TestBrowserCredentialOwnerTokenReplaced(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0")
	own := ts.signIn(ts.token)
	restart := func() {
		t.Helper()
		ts.srv.Shutdown(false)
		if err := <-ts.done; err != nil {
			t.Fatal(err)
		}
		srv, err := New(context.Background(), Config{
			StateDir: ts.dir, HolderArgv: []string{"/bin/false"}, Listen: strings.TrimPrefix(ts.base, "http://"),
			Logger: slog.New(slog.NewTextHandler(ts.logs, nil)), KillGrace: time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		ts.srv = srv
		go func() { ts.done <- srv.Serve(context.Background()) }()
		tok, _ := os.ReadFile(ts.dir.Token())
		ts.token = strings.TrimSpace(string(tok))
	}
	restart()
	expectStatus(t, ts.do("GET", "/api/me", "", nil, bearer(own.Credential)...), 200)
	os.Remove(ts.dir.Token())
	restart()
	expectJSONError(t, ts.do("GET", "/api/me", "", nil, bearer(own.Credential)...), 401, "termkeep url")
	fresh := ts.signIn(ts.token)
	expectStatus(t, ts.do("GET", "/api/me", "", nil, bearer(fresh.Credential)...), 200)
}

func TestWSAuth(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"termkeep.v1, termkeep.auth.tkb_abc"}, "tkb_abc"},
		{[]string{"termkeep.auth.tkb_abc", "termkeep.v1"}, "tkb_abc"},
		{[]string{" termkeep.v1 ,termkeep.auth.tkb_a-b_C9 "}, "tkb_a-b_C9"},
		{[]string{"termkeep.auth.tkb_abc"}, ""},                                                                       // speaks no protocol
		{[]string{"termkeep.v1"}, ""},                                                                                 // no credential
		{[]string{"termkeep.v1, termkeep.auth."}, ""},                                                                 // empty
		{[]string{"termkeep.v1, termkeep.auth.a, termkeep.auth.b"}, ""},                                               // two
		{[]string{"termkeep.v1, termkeep.auth.a\x00b"}, ""},                                                           // not token characters
		{[]string{"termkeep.v1, termkeep.auth.a=b"}, ""},                                                              // padding is not ours
		{[]string{"termkeep.v2, termkeep.auth.tkb_abc"}, ""},                                                          // another protocol
		{[]string{"TERMKEEP.V1, termkeep.auth.tkb_abc"}, ""},                                                          // protocols are case-sensitive
		{[]string{"termkeep.v1, termkeep.auth.tkb_" + strings.Repeat("a", 5000)}, "tkb_" + strings.Repeat("a", 5000)}, // long: the lookup finds nothing
		{nil, ""},
	} {
		got, ok := wsAuth(tc.in)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("wsAuth(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

func FuzzWSAuth(f *testing.F) {
	for _, s := range []string{"termkeep.v1, termkeep.auth.tkb_abc", "termkeep.auth.x", "termkeep.v1,,termkeep.auth.", "a, b, c", ""} {
		f.Add(s, "termkeep.v1")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		cred, ok := wsAuth([]string{a, b})
		if !ok {
			return
		}
		if cred == "" || !isTokenChars(cred) || !strings.Contains(a+","+b, WSAuthPrefix+cred) || !strings.Contains(a+","+b, WSProtocol) {
			t.Fatalf("wsAuth(%q, %q) = %q", a, b, cred)
		}
	})
}

func TestBrowserLabel(t *testing.T) {
	for _, tc := range []struct{ ua, want string }{
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.8078.73 Safari/537.36", "Chrome (headless) 156 on Linux"},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome 131 on Linux"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86", "Edge 131 on Windows"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15", "Safari 18 on macOS"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1", "Safari 18 on iPhone"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1", "Chrome 131 on iPhone"},
		{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36", "Chrome 131 on Android"},
		{"Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox 133 on Linux"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/116.0.0.0", "Opera 116 on Windows"},
		// Unknown, hostile or empty: kept printable and short.
		{"curl/8.5.0", "curl/8.5.0"},
		{"", ""},
		{"evil\x1b[31m\x00agent", "evil[31magent"},
		{strings.Repeat("x", 200), strings.Repeat("x", maxLabel-1) + "…"},
		{"Chrome/" + strings.Repeat("9", 300), "Chrome/" + strings.Repeat("9", maxLabel-8) + "…"},
	} {
		if got := browserLabel(tc.ua); got != tc.want {
			t.Errorf("browserLabel(%q) = %q, want %q", tc.ua, got, tc.want)
		}
	}
}
