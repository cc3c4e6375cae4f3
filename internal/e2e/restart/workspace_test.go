package restart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
)

func workspaces(e *e2e.Env) []api.Workspace {
	e.T.Helper()
	var list []api.Workspace
	if err := json.Unmarshal([]byte(e.MustTk("workspace", "ls", "--json")), &list); err != nil {
		e.T.Fatalf("workspace ls --json: %v", err)
	}
	return list
}

// A workspace: created by `new --workspace`, paused (processes ended, state
// kept), resumed (every session restored where it was), removed (sessions
// ended, data deleted).
func TestWorkspacePauseResumeRemove(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	proj := t.TempDir()
	sub := filepath.Join(proj, "src dir")
	os.Mkdir(sub, 0o755)
	a := strings.TrimSpace(e.MustTk("new", "--workspace", "proj", "--cwd", proj, "--name", "a", "--no-shell-integration", "--", "sh"))
	// A child that ignores SIGHUP: the pause ends it with SIGKILL after the grace.
	b := strings.TrimSpace(e.MustTk("new", "--workspace", "proj", "--cwd", sub, "--name", "b", "--", "sh", "-c", "trap '' HUP; echo stubborn; exec sleep 600"))
	other := strings.TrimSpace(e.MustTk("new", "--name", "other", "--", "cat"))
	e.MustTk("send", a, "echo before-pause-$((1+1))")
	if _, errs, code := e.Tk("wait", a, "--from", "start", "--output", "before-pause-2", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	ws := workspaces(e)
	if len(ws) != 1 || ws[0].Name != "proj" || ws[0].Dir != proj || ws[0].Sessions != 2 || ws[0].Running != 2 {
		t.Fatalf("workspaces after new --workspace: %+v", ws)
	}
	if out := e.MustTk("ls", "--workspace", "proj"); strings.Contains(out, other) || !strings.Contains(out, a) || !strings.Contains(out, b) {
		t.Fatalf("ls --workspace proj:\n%s", out)
	}
	pidB := *e.Session(b).Pid

	e.MustTk("workspace", "pause", "proj")
	for _, id := range []string{a, b} {
		if s := e.Session(id); s.State != "paused" || s.Pid != nil {
			t.Fatalf("after pause: %+v", s)
		}
	}
	if syscall.Kill(pidB, 0) == nil {
		t.Fatalf("the paused session's process %d still runs", pidB)
	}
	if s := e.Session(other); s.State != "running" {
		t.Fatalf("a session of no workspace was touched by the pause: %+v", s)
	}
	if ws := workspaces(e); !ws[0].Paused || ws[0].Running != 0 {
		t.Fatalf("workspace after pause: %+v", ws)
	}
	// No new session joins a paused workspace.
	if _, errs, code := e.Tk("new", "--workspace", "proj", "--", "cat"); code == 0 || !strings.Contains(errs, "paused") {
		t.Fatalf("new in a paused workspace: exit %d %q", code, errs)
	}

	e.MustTk("workspace", "resume", "proj")
	for _, id := range []string{a, b} {
		if s := e.Session(id); s.State != "running" {
			t.Fatalf("after resume: %+v", s)
		}
	}
	e.MustTk("send", a, "pwd")
	if _, errs, code := e.Tk("wait", a, "--from", "start", "--output", "\n"+proj, "--timeout", "20s"); code != 0 {
		t.Fatalf("resumed session a: %s\n%s", errs, e.MustTk("capture", a))
	}
	if !strings.Contains(e.MustTk("capture", a), "before-pause-2") {
		t.Fatal("the resumed session lost its old screen")
	}
	if _, errs, code := e.Tk("wait", b, "--from", "start", "--output", "resumed at", "--timeout", "20s"); code != 0 {
		t.Fatalf("resumed session b: %s", errs)
	}

	e.MustTk("workspace", "rm", "proj")
	if ws := workspaces(e); len(ws) != 0 {
		t.Fatalf("workspaces after rm: %+v", ws)
	}
	for _, id := range []string{a, b} {
		if _, err := os.Stat(filepath.Join(e.Dir, "sessions", id)); !os.IsNotExist(err) {
			t.Fatalf("session %s's data is still there after workspace rm: %v", id, err)
		}
		if _, _, code := e.Tk("capture", id); code == 0 {
			t.Fatalf("session %s still answers after workspace rm", id)
		}
	}
	if s := e.Session(other); s.State != "running" {
		t.Fatalf("workspace rm touched another session: %+v", s)
	}
	if _, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", other)); err != nil {
		t.Fatal(err)
	}
}

// workspace add: an explicit directory; a bad name or a missing directory is
// a clear error.
func TestWorkspaceAdd(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	dir := t.TempDir()
	e.MustTk("workspace", "add", "w1", dir)
	if _, errs, code := e.Tk("workspace", "add", "w1", dir); code == 0 || !strings.Contains(errs, "already exists") {
		t.Fatalf("second add: exit %d %q", code, errs)
	}
	if _, errs, code := e.Tk("workspace", "add", "bad name", dir); code == 0 || !strings.Contains(errs, "not allowed") {
		t.Fatalf("bad name: exit %d %q", code, errs)
	}
	if _, errs, code := e.Tk("workspace", "add", "w2", filepath.Join(dir, "nope")); code == 0 || !strings.Contains(errs, "not an existing") {
		t.Fatalf("missing dir: exit %d %q", code, errs)
	}
	if _, errs, code := e.Tk("workspace", "pause", "nope"); code == 0 || !strings.Contains(errs, "no workspace") {
		t.Fatalf("pause unknown: exit %d %q", code, errs)
	}
	ws := workspaces(e)
	if len(ws) != 1 || ws[0].Dir != dir || ws[0].Sessions != 0 {
		t.Fatalf("workspaces: %+v", ws)
	}
}
