package client

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"termkeep/internal/statedir"
)

// A server that fails to start is reported with its own last sentence,
// from what this start appended to server.log (an older failure in the log
// is not it), and the log's path; one that says nothing, by its exit.
func TestEnsureServerSaysWhy(t *testing.T) {
	dir := statedir.Dir(t.TempDir())
	if err := dir.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir.ServerLog(), []byte("termkeep: an old failure\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := New(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name, script, want string
	}{
		{"says why", `echo 'time=x level=ERROR msg="the registry is damaged"' >&2; echo 'termkeep: the first sentence' >&2; ` +
			`echo 'termkeep: the registry is damaged: run doctor' >&2; echo 'goodbye'; exit 1`,
			"the termkeep server did not start: the registry is damaged: run doctor (its log: " + dir.ServerLog() + ")"},
		{"silent", `exit 3`, "the termkeep server exited at start (exit status 3); see " + dir.ServerLog()},
	} {
		err := c.EnsureServer(ctx, []string{"/bin/sh", "-c", tc.script})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v\nwant %s", tc.name, err, tc.want)
		}
	}
	if b, _ := os.ReadFile(dir.ServerLog()); !strings.HasPrefix(string(b), "termkeep: an old failure\n") || !strings.Contains(string(b), "goodbye") {
		t.Errorf("server.log lost what it held or missed what the server wrote:\n%s", b)
	}
}
