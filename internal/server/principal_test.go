package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/store"
)

func TestPrincipalSees(t *testing.T) {
	a := store.Session{ID: "a1", Owner: "alice", Workspace: "w"}
	b := store.Session{ID: "b1", Owner: "bob"}
	none := store.Session{ID: "n1", Owner: ""}
	for _, c := range []struct {
		name string
		p    principal
		sees []bool // a, b, none
	}{
		{"owner", principal{owner: true, user: "root"}, []bool{true, true, true}},
		{"alice", principal{user: "alice"}, []bool{true, false, false}},
		{"alice's session", principal{user: "alice", session: "a1"}, []bool{true, false, false}},
		{"alice, another session", principal{user: "alice", session: "a2"}, []bool{false, false, false}},
		{"alice's workspace", principal{user: "alice", workspace: "w"}, []bool{true, false, false}},
		{"alice, another workspace", principal{user: "alice", workspace: "v"}, []bool{false, false, false}},
		{"bob's token on alice's session", principal{user: "bob", session: "a1"}, []bool{false, false, false}},
		{"no one", principal{}, []bool{false, false, false}},
	} {
		for i, s := range []store.Session{a, b, none} {
			if got := c.p.sees(s); got != c.sees[i] {
				t.Errorf("%s sees %s: %v, want %v", c.name, s.ID, got, c.sees[i])
			}
		}
	}
	if p := principalOf(context.Background()); p.owner || p.user != "" {
		t.Errorf("a context without a principal acts as %+v, want no one", p)
	}
}

func TestScopeCreate(t *testing.T) {
	for _, c := range []struct {
		name      string
		p         principal
		workspace string // asked for
		status    int
		lands     string // the workspace it lands in
	}{
		{"owner", principal{owner: true, user: "root"}, "x", 0, "x"},
		{"user", principal{user: "alice"}, "", 0, ""},
		{"no one", principal{}, "", 403, ""},
		{"read-only", principal{user: "alice", readOnly: true}, "", 403, ""},
		{"share link", principal{user: "alice", session: "a1"}, "", 403, ""},
		{"workspace, none asked", principal{user: "alice", workspace: "w"}, "", 0, "w"},
		{"workspace, same", principal{user: "alice", workspace: "w"}, "w", 0, "w"},
		{"workspace, another", principal{user: "alice", workspace: "w"}, "v", 403, "v"},
	} {
		req := api.CreateRequest{Workspace: c.workspace}
		status, err := c.p.scopeCreate(&req)
		if status != c.status || (err != nil) != (c.status != 0) || req.Workspace != c.lands {
			t.Errorf("%s: %d %v, workspace %q; want %d, workspace %q", c.name, status, err, req.Workspace, c.status, c.lands)
		}
	}
}

func TestTokenConnsCut(t *testing.T) {
	var c tokenConns
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	c.track("t1", cancel1)
	forget := c.track("t1", cancel2)
	c.track("t2", cancel3)
	forget()
	c.cut("t1")
	if ctx1.Err() == nil {
		t.Error("cut left a request of t1 running")
	}
	if ctx2.Err() != nil {
		t.Error("cut ended a request that was forgotten")
	}
	if ctx3.Err() != nil {
		t.Error("cut ended another token's request")
	}
	cancel2()
}

// Registry tokens at the guard: who sees what, read-only, revoked and
// expired, and the owner unchanged.
func TestRegistryTokens(t *testing.T) {
	mine := endedSession("aaaaaaaa", "alices")
	mine.Owner, mine.Workspace = "alice", "w"
	other := endedSession("bbbbbbbb", "bobs")
	other.Owner = "bob"
	owners := endedSession("cccccccc", "owners")
	owners.Owner = currentUser()
	ts := newTestServer(t, "127.0.0.1:0", mine, other, owners)
	st := ts.srv.store
	ctx := context.Background()
	past := time.Now().Add(-time.Second)
	tokens := map[string]store.Token{
		"alice-secret-0123456789abcdef": {ID: "t-alice", User: "alice"},
		"alice-ro-secret-0123456789abc": {ID: "t-ro", User: "alice", ReadOnly: true},
		"alice-link-secret-0123456789a": {ID: "t-link", User: "alice", Session: "aaaaaaaa"},
		"alice-old-secret-0123456789ab": {ID: "t-old", User: "alice", ExpiresAt: &past},
		"alice-gone-secret-0123456789a": {ID: "t-gone", User: "alice"},
		"bob-secret-0123456789abcdef01": {ID: "t-bob", User: "bob"},
	}
	for secret, tok := range tokens {
		if _, err := st.CreateToken(ctx, tok, secret); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.RevokeToken(ctx, "t-gone"); err != nil {
		t.Fatal(err)
	}
	as := func(secret string) []string { return []string{"Authorization", "Bearer " + secret} }
	list := func(secret string) string {
		t.Helper()
		var l []api.Session
		json.Unmarshal(expectStatus(t, ts.do("GET", "/api/sessions", "", nil, as(secret)...), 200), &l)
		var names []string
		for _, s := range l {
			names = append(names, s.Name)
		}
		return strings.Join(names, " ")
	}
	if got := list("alice-secret-0123456789abcdef"); got != "alices" {
		t.Errorf("alice lists %q", got)
	}
	if got := list("bob-secret-0123456789abcdef01"); got != "bobs" {
		t.Errorf("bob lists %q", got)
	}
	if got := list("alice-link-secret-0123456789a"); got != "alices" {
		t.Errorf("alice's share link lists %q", got)
	}
	var all []api.Session
	json.Unmarshal(expectStatus(t, ts.do("GET", "/api/sessions", "bearer", nil), 200), &all)
	if len(all) != 3 {
		t.Errorf("the owner lists %d sessions", len(all))
	}

	// Another user's session is 404 with the body of a missing one.
	missing := expectStatus(t, ts.do("GET", "/api/sessions/nothing", "", nil, as("bob-secret-0123456789abcdef01")...), 404)
	for _, ref := range []string{"alices", "aaaaaaaa", "owners"} {
		got := expectStatus(t, ts.do("GET", "/api/sessions/"+ref, "", nil, as("bob-secret-0123456789abcdef01")...), 404)
		if string(got) != strings.Replace(string(missing), "nothing", ref, 1) {
			t.Errorf("bob's GET %s: %s; a missing one: %s", ref, got, missing)
		}
	}

	// Read-only: looks, changes nothing.
	expectStatus(t, ts.do("GET", "/api/sessions/alices", "", nil, as("alice-ro-secret-0123456789abc")...), 200)
	expectJSONError(t, ts.do("PATCH", "/api/sessions/alices", "", map[string]any{"name": "x"}, as("alice-ro-secret-0123456789abc")...), 403, "read-only")
	expectJSONError(t, ts.do("DELETE", "/api/sessions/alices", "", nil, as("alice-ro-secret-0123456789abc")...), 403, "read-only")
	expectJSONError(t, ts.do("POST", "/api/sessions/alices/kill", "", nil, as("alice-ro-secret-0123456789abc")...), 403, "read-only")
	// The share link may rename its session (it is not read-only), but
	// creates nothing.
	expectStatus(t, ts.do("PATCH", "/api/sessions/alices", "", map[string]any{"name": "renamed"}, as("alice-link-secret-0123456789a")...), 200)
	expectJSONError(t, ts.do("POST", "/api/sessions", "", map[string]any{"cwd": "/"}, as("alice-link-secret-0123456789a")...), 403, "one session")

	// Workspaces: alice sees hers, bob none.
	var ws []api.Workspace
	json.Unmarshal(expectStatus(t, ts.do("GET", "/api/workspaces", "", nil, as("bob-secret-0123456789abcdef01")...), 200), &ws)
	if len(ws) != 0 {
		t.Errorf("bob's workspaces: %+v", ws)
	}

	// Expired and revoked tokens are wrong tokens.
	for _, secret := range []string{"alice-old-secret-0123456789ab", "alice-gone-secret-0123456789a", "alice-secret-0123456789abcdeF"} {
		expectJSONError(t, ts.do("GET", "/api/sessions", "", nil, as(secret)...), 401, "access token")
	}
	// A use is recorded; the secrets never reach the log.
	if tok, _ := st.Token(ctx, "t-alice"); tok.LastUsedAt == nil {
		t.Errorf("alice's token was used but has no last use: %+v", tok)
	}
	for secret := range tokens {
		if strings.Contains(ts.logs.String(), secret) {
			t.Errorf("the log holds a secret:\n%s", ts.logs.String())
		}
	}

}

// GET /api/me says who a token acts as and whether it may create sessions,
// which is what POST /api/sessions then does.
func TestMe(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0", endedSession("aaaaaaaa", "alices"))
	st := ts.srv.store
	ctx := context.Background()
	if err := st.CreateWorkspace(ctx, store.Workspace{Name: "w", Dir: "/"}); err != nil {
		t.Fatal(err)
	}
	for secret, tok := range map[string]store.Token{
		"me-alice-0123456789abcdef": {ID: "t-alice", User: "alice"},
		"me-ro-0123456789abcdefghi": {ID: "t-ro", User: "alice", ReadOnly: true},
		"me-link-0123456789abcdefg": {ID: "t-link", User: "alice", Session: "aaaaaaaa"},
		"me-ws-0123456789abcdefghi": {ID: "t-ws", User: "alice", Workspace: "w"},
	} {
		if _, err := st.CreateToken(ctx, tok, secret); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		auth []string
		want api.Me
	}{
		{"owner", []string{"Authorization", "Bearer " + ts.token}, api.Me{User: currentUser(), Owner: true, CanCreate: true}},
		{"user", []string{"Authorization", "Bearer me-alice-0123456789abcdef"}, api.Me{User: "alice", CanCreate: true}},
		{"read-only", []string{"Authorization", "Bearer me-ro-0123456789abcdefghi"}, api.Me{User: "alice", ReadOnly: true}},
		{"share link", []string{"Authorization", "Bearer me-link-0123456789abcdefg"}, api.Me{User: "alice", Session: "aaaaaaaa"}},
		{"workspace", []string{"Authorization", "Bearer me-ws-0123456789abcdefghi"}, api.Me{User: "alice", Workspace: "w", CanCreate: true}},
	} {
		var got api.Me
		if err := json.Unmarshal(expectStatus(t, ts.do("GET", "/api/me", "", nil, c.auth...), 200), &got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: /api/me = %+v, want %+v", c.name, got, c.want)
		}
	}
	expectJSONError(t, ts.do("GET", "/api/me", "", nil), 401, "token")
}
