package server

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"termkeep/internal/api"
	"termkeep/internal/sessiondir"
	"termkeep/internal/store"
)

// Neither a user's token nor a read-only share link learns where the
// server keeps its state (the owner token is a file there): not from
// /api/health, not from the text of an error. The owner still does.
func TestServerPathsHidden(t *testing.T) {
	a1 := endedSession("a1", "")
	a1.Owner = "alice"
	// A holder binary that is not there: starting a session fails with an
	// error that names it.
	ts := newTestServerWith(t, "127.0.0.1:0", func(c *Config) {
		c.HolderArgv = []string{c.StateDir.String() + "/no-such-holder"}
	}, endedSession("s1", "one"), a1)
	ctx := context.Background()
	st := ts.srv.store
	if err := st.CreateUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	const userSecret, shareSecret = "user-secret-0123456789abcdefghijklmnop", "share-secret-0123456789abcdefghijklmno"
	if _, err := st.CreateToken(ctx, store.Token{ID: "tuser", User: "alice"}, userSecret); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateToken(ctx, store.Token{ID: "tshare", User: "alice", Session: "a1", ReadOnly: true}, shareSecret); err != nil {
		t.Fatal(err)
	}
	state := ts.dir.String()
	leaks := func(who string, b []byte) {
		t.Helper()
		for _, p := range ts.srv.serverPaths() {
			if strings.Contains(string(b), p) {
				t.Errorf("%s was shown the server path %s: %s", who, p, b)
			}
		}
	}

	var h api.Health
	b := expectStatus(t, ts.do("GET", "/api/health", "bearer", nil), 200)
	if json.Unmarshal(b, &h); h.StateDir != state {
		t.Errorf("the owner's health has state_dir %q, want %q", h.StateDir, state)
	}
	for who, secret := range map[string]string{"a user token": userSecret, "a share link": shareSecret} {
		b := expectStatus(t, ts.do("GET", "/api/health", "", nil, "Authorization", "Bearer "+secret), 200)
		if strings.Contains(string(b), "state_dir") {
			t.Errorf("%s's health names the state directory: %s", who, b)
		}
		leaks(who, b)
	}

	// Errors that name a path of the server: a holder that cannot start
	// (this test server's holder is /bin/false), a log that is gone.
	resp := ts.do("POST", "/api/sessions", "", map[string]any{"command": []string{"true"}, "cwd": "/"}, "Authorization", "Bearer "+userSecret)
	b = expectStatus(t, resp, resp.StatusCode)
	if resp.StatusCode < 400 {
		t.Fatalf("create with a holder that cannot start: %d %s", resp.StatusCode, b)
	}
	leaks("a user token creating a session", b)
	// A restore that fails ends the session with a reason, which the
	// session's answers show.
	resp = ts.do("POST", "/api/sessions/a1/restore", "", nil, "Authorization", "Bearer "+userSecret)
	b = expectStatus(t, resp, resp.StatusCode)
	if resp.StatusCode < 400 {
		t.Fatalf("restore with a holder that cannot start: %d %s", resp.StatusCode, b)
	}
	leaks("a user token restoring a session", b)
	leaks("a user token listing its sessions", expectStatus(t, ts.do("GET", "/api/sessions", "", nil, "Authorization", "Bearer "+userSecret), 200))
	leaks("a share link reading its session", expectStatus(t, ts.do("GET", "/api/sessions/a1", "", nil, "Authorization", "Bearer "+shareSecret), 200))
	if err := os.RemoveAll(filepath.Join(ts.dir.Session("a1"), sessiondir.LogDir)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ts.dir.Session("a1"), sessiondir.LogDir), nil, 0o600) // a file where the log directory was
	for _, path := range []string{"/api/sessions/a1/replay", "/api/sessions/a1/replay/screen?at=0"} {
		resp := ts.do("GET", path, "", nil, "Authorization", "Bearer "+shareSecret)
		b, _ := io.ReadAll(resp.Body)
		leaks("a share link at "+path, b)
	}
}
