package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/store"
	"termkeep/internal/testclock"
)

// A credential that once worked says why it stopped (a stable code in the
// 401's JSON), so a page can stop retrying and tell its user; a secret
// that never worked learns nothing but "wrong", and a guest is never told
// about the owner's token file.
func TestRefusalSaysRevokedOrExpired(t *testing.T) {
	// The clock starts now: a token's expiry also ends its requests in real time.
	clk := testclock.New(time.Now())
	mine := endedSession("aaaaaaaa", "mine")
	ts := newTestServerAt(t, "127.0.0.1:0", clk.Now, mine)
	st, ctx := ts.srv.store, context.Background()
	soon := clk.Now().Add(time.Hour)
	for secret, tok := range map[string]store.Token{
		"link-revoked-0123456789abcdef": {ID: "t-gone", User: currentUser(), Session: "aaaaaaaa", ReadOnly: true},
		"link-expires-0123456789abcdef": {ID: "t-exp", User: currentUser(), Session: "aaaaaaaa", ExpiresAt: &soon},
		"link-browser-0123456789abcdef": {ID: "t-brw", User: currentUser(), Session: "aaaaaaaa", ReadOnly: true},
		"link-signout-0123456789abcdef": {ID: "t-out", User: currentUser(), Session: "aaaaaaaa"},
	} {
		if _, err := st.CreateToken(ctx, tok, secret); err != nil {
			t.Fatal(err)
		}
	}
	viaToken := ts.signIn("link-browser-0123456789abcdef")
	signedOut := ts.signIn("link-signout-0123456789abcdef")
	viaExpiring := ts.signIn("link-expires-0123456789abcdef")
	if err := st.RevokeToken(ctx, "t-gone"); err != nil {
		t.Fatal(err)
	}
	if err := st.RevokeToken(ctx, "t-brw"); err != nil {
		t.Fatal(err)
	}
	if err := st.RevokeBrowserCred(ctx, signedOut.ID); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Hour)

	refusal := func(resp *http.Response) api.Error {
		t.Helper()
		var e api.Error
		if err := json.Unmarshal(expectStatus(t, resp, http.StatusUnauthorized), &e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, c := range []struct {
		name, secret, code string
	}{
		{"a revoked token", "link-revoked-0123456789abcdef", api.CodeRevoked},
		{"an expired token", "link-expires-0123456789abcdef", api.CodeExpired},
		{"a browser credential of a revoked token", viaToken.Credential, api.CodeRevoked},
		{"a browser credential of an expired token", viaExpiring.Credential, api.CodeExpired},
		{"a browser credential signed out", signedOut.Credential, api.CodeRevoked},
		{"a secret never made", "link-unknown-0123456789abcdef", ""},
		{"a browser credential never made", browserSecretPrefix + "x0123456789abcdef0123456789abcdef0123456789", ""},
		{"the owner token, one character off", ts.token[:len(ts.token)-1] + "!", ""},
	} {
		for _, path := range []string{"/api/sessions", "/api/sessions/aaaaaaaa", "/api/me"} {
			e := refusal(ts.do("GET", path, "", nil, bearer(c.secret)...))
			if e.Code != c.code {
				t.Errorf("%s, GET %s: code %q, want %q (%s)", c.name, path, e.Code, c.code, e.Error)
			}
			if c.code != "" && (strings.Contains(e.Error, "Bearer") || strings.Contains(e.Error, "token file")) {
				t.Errorf("%s: a guest is told of the owner's token: %q", c.name, e.Error)
			}
			if c.code != "" && !strings.Contains(e.Error, c.code) {
				t.Errorf("%s: the sentence does not say %s: %q", c.name, c.code, e.Error)
			}
		}
	}
	// A WebSocket with a revoked credential is refused the same way.
	_, resp, err := ts.dialWS(ctx, "/ws/sessions/aaaaaaaa", WSProtocol, WSAuthPrefix+viaToken.Credential)
	if err == nil || resp == nil {
		t.Fatalf("a revoked credential's WebSocket: %v", err)
	}
	if e := refusal(resp); e.Code != api.CodeRevoked {
		t.Errorf("the WebSocket's refusal: %+v", e)
	}
	// No credential at all: no code.
	if e := refusal(ts.do("GET", "/api/sessions", "", nil)); e.Code != "" {
		t.Errorf("no credential: code %q", e.Code)
	}
}
