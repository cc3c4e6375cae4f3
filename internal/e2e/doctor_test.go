package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/statedir"
)

// A registry lost while the server was down is rebuilt by doctor from the
// sessions' meta.json, and the next server reconnects the live holders.
func TestDoctorRebuildsRegistry(t *testing.T) {
	e := newEnv(t)
	e.startServer()
	sleeper := strings.TrimSpace(e.mustTk("new", "--name", "sleeper", "--", "sleep", "600"))
	catID := strings.TrimSpace(e.mustTk("new", "--name", "echo", "--", "cat"))
	e.killServer()

	db := statedir.Dir(e.dir).DB()
	if err := os.WriteFile(db, []byte(strings.Repeat("not a registry ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")

	out, _, code := e.tk("doctor")
	if code != 1 || !strings.Contains(out, "error registry") {
		t.Errorf("doctor on a corrupt registry: exit %d, want 1:\n%s", code, out)
	}
	out = e.mustTk("doctor", "--rebuild")
	t.Logf("doctor --rebuild:\n%s", out)
	if !strings.Contains(out, "2 session(s) recovered") {
		t.Errorf("doctor --rebuild:\n%s", out)
	}
	if aside, _ := filepath.Glob(db + ".broken-*"); len(aside) == 0 {
		t.Error("the broken registry was not kept")
	}

	e.startServer()
	state := map[string]string{}
	for _, s := range e.ls() {
		state[s.ID] = s.State
	}
	if state[sleeper] != "running" || state[catID] != "running" || len(state) != 2 {
		t.Fatalf("after the rebuild: %v, want %s and %s running", state, sleeper, catID)
	}
	e.mustTk("send", catID, "hello-doctor")
	waitFor(t, 10*time.Second, "cat to echo", func() bool {
		return strings.Contains(e.mustTk("capture", catID), "hello-doctor")
	})
	if _, errs, code := e.tk("doctor", "--repair"); code != 1 || !strings.Contains(errs, "a server is running (pid") {
		t.Errorf("doctor --repair beside a server: exit %d: %s", code, errs)
	}
}
