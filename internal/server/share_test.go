package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"termkeep/internal/api"
	"termkeep/internal/store"
)

// The page's Share dialog: the owner makes, lists and revokes a session's
// links; a link reaches that session only; nobody but the owner sees or
// makes links, whatever their token may do otherwise.
func TestShareLinks(t *testing.T) {
	mine := endedSession("aaaaaaaa", "mine")
	mine.Owner = currentUser()
	other := endedSession("bbbbbbbb", "other")
	other.Owner = currentUser()
	ts := newTestServer(t, "127.0.0.1:0", mine, other)
	st, ctx := ts.srv.store, context.Background()
	owner := bearer(ts.token)

	var ro api.TokenCreated
	json.Unmarshal(expectStatus(t, ts.do("POST", "/api/sessions/mine/links", "", api.ShareRequest{Name: "phone", ExpiresIn: 3600}, owner...), http.StatusCreated), &ro)
	if !ro.ReadOnly || ro.Session != "aaaaaaaa" || ro.Name != "phone" || ro.ExpiresAt == nil || ro.Warning != "" ||
		!strings.Contains(ro.URL, "#token="+ro.Secret) || ro.Secret == "" {
		t.Fatalf("a read-only link: %+v", ro)
	}
	var rw api.TokenCreated
	json.Unmarshal(expectStatus(t, ts.do("POST", "/api/sessions/aaaaaaaa/links", "", api.ShareRequest{Writable: true}, owner...), http.StatusCreated), &rw)
	if rw.ReadOnly || rw.Warning != api.WritableWarning || rw.ExpiresAt != nil {
		t.Fatalf("a writable link: %+v", rw)
	}
	// Another session's link is not in this one's list.
	expectStatus(t, ts.do("POST", "/api/sessions/other/links", "", api.ShareRequest{Name: "elsewhere"}, owner...), http.StatusCreated)
	list := func() []api.Token {
		t.Helper()
		var l []api.Token
		json.Unmarshal(expectStatus(t, ts.do("GET", "/api/sessions/mine/links", "", nil, owner...), 200), &l)
		return l
	}
	if l := list(); len(l) != 2 || l[0].ID != ro.ID || l[1].ID != rw.ID {
		t.Fatalf("mine's links: %+v", l)
	}

	// The link reaches its session, and nothing else.
	link := bearer(ro.Secret)
	expectStatus(t, ts.do("GET", "/api/sessions/mine", "", nil, link...), 200)
	expectStatus(t, ts.do("GET", "/api/sessions/other", "", nil, link...), 404)
	var sessions []api.Session
	json.Unmarshal(expectStatus(t, ts.do("GET", "/api/sessions", "", nil, link...), 200), &sessions)
	if len(sessions) != 1 || sessions[0].ID != "aaaaaaaa" {
		t.Fatalf("the link lists %+v", sessions)
	}

	// Nobody but the owner sees or makes links: not the link itself,
	// writable or not, nor another user's token, nor their browsers.
	if _, err := st.CreateToken(ctx, store.Token{ID: "t-alice", User: "alice"}, "alice-secret-0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	browser := ts.signIn(rw.Secret)
	for name, who := range map[string][]string{
		"a read-only link": link, "a writable link": bearer(rw.Secret), "its browser": bearer(browser.Credential),
		"another user": bearer("alice-secret-0123456789abcdef"),
	} {
		for _, c := range []struct{ method, path string }{
			{"GET", "/api/sessions/mine/links"}, {"POST", "/api/sessions/mine/links"}, {"DELETE", "/api/sessions/mine/links/" + ro.ID},
		} {
			resp := ts.do(c.method, c.path, "", api.ShareRequest{Writable: true}, who...)
			if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s: %s %s answered %d", name, c.method, c.path, resp.StatusCode)
			}
		}
	}
	if l := list(); len(l) != 2 {
		t.Fatalf("links after the refusals: %+v", l)
	}

	// Revoked: gone from the list, and the link stops working. A link of
	// another session is not revoked through this one.
	expectStatus(t, ts.do("DELETE", "/api/sessions/other/links/"+ro.ID, "", nil, owner...), 404)
	expectStatus(t, ts.do("DELETE", "/api/sessions/mine/links/"+ro.ID, "", nil, owner...), 200)
	if l := list(); len(l) != 1 || l[0].ID != rw.ID {
		t.Fatalf("links after a revoke: %+v", l)
	}
	expectJSONError(t, ts.do("GET", "/api/sessions/mine", "", nil, link...), 401, "revoked")

	// Bad requests lose nothing.
	expectStatus(t, ts.do("POST", "/api/sessions/mine/links", "", map[string]any{"expires_in": -1}, owner...), 400)
	expectStatus(t, ts.do("POST", "/api/sessions/mine/links", "", map[string]any{"name": strings.Repeat("x", 65)}, owner...), 400)
	expectStatus(t, ts.do("POST", "/api/sessions/mine/links", "", map[string]any{"read_only": false}, owner...), 400)
	if l := list(); len(l) != 1 {
		t.Fatalf("links after bad requests: %+v", l)
	}
}
