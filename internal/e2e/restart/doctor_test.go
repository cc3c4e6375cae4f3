package restart

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
)

// A registry lost while the server was down is rebuilt by doctor from the
// sessions' meta.json, names and workspaces included (a rename too), and
// the next server reconnects the live holders.
func TestDoctorRebuildsRegistry(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	w := e2e.NewWebEnv(t)
	e := w.Env
	wsDir := t.TempDir()
	sleeper := strings.TrimSpace(e.MustTk("new", "--name", "sleeper", "--workspace", "proj", "--cwd", wsDir, "--", "sleep", "600"))
	catID := strings.TrimSpace(e.MustTk("new", "--name", "echo", "--", "cat"))
	// A rename reaches the holder, which keeps the name in meta.json.
	w.API("PATCH", "/api/sessions/echo", map[string]any{"name": "echo2"}, 200, nil)
	e2e.WaitFor(t, 10*time.Second, "the new name in meta.json", func() bool {
		m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", catID))
		return err == nil && m.Name == "echo2"
	})
	if m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", sleeper)); err != nil || m.Name != "sleeper" || m.Workspace != "proj" {
		t.Errorf("meta.json of %s: name %q, workspace %q (%v), want sleeper, proj", sleeper, m.Name, m.Workspace, err)
	}
	e.KillServer()

	db := ruinRegistry(t, e)

	out, _, code := e.Tk("doctor")
	if code != 1 || !strings.Contains(out, "error registry") {
		t.Errorf("doctor on a corrupt registry: exit %d, want 1:\n%s", code, out)
	}
	out = e.MustTk("doctor", "--rebuild")
	t.Logf("doctor --rebuild:\n%s", out)
	if !strings.Contains(out, "2 session(s) recovered") {
		t.Errorf("doctor --rebuild:\n%s", out)
	}
	if aside, _ := filepath.Glob(db + ".broken-*"); len(aside) == 0 {
		t.Error("the broken registry was not kept")
	}
	if !strings.Contains(out, "workspace proj: named by session "+sleeper+" but not in the registry [repaired: made again with directory "+wsDir) {
		t.Errorf("doctor --rebuild did not say it made workspace proj again:\n%s", out)
	}

	e.StartServer()
	state := map[string]string{}
	for _, s := range e.Ls() {
		state[s.ID] = s.State
		got := s.Name + "/" + s.Workspace
		if want := map[string]string{sleeper: "sleeper/proj", catID: "echo2/"}[s.ID]; got != want {
			t.Errorf("session %s after the rebuild: name/workspace %q, want %q", s.ID, got, want)
		}
	}
	if state[sleeper] != "running" || state[catID] != "running" || len(state) != 2 {
		t.Fatalf("after the rebuild: %v, want %s and %s running", state, sleeper, catID)
	}
	if out := e.MustTk("workspace", "ls"); !strings.Contains(out, "proj") || !strings.Contains(out, wsDir) {
		t.Errorf("workspace ls after the rebuild:\n%s", out)
	}
	e.MustTk("send", "echo2", "hello-doctor")
	e2e.WaitFor(t, 10*time.Second, "cat to echo", func() bool {
		return strings.Contains(e.MustTk("capture", catID), "hello-doctor")
	})
	if _, errs, code := e.Tk("doctor", "--repair"); code != 1 || !strings.Contains(errs, "a server is running (pid") {
		t.Errorf("doctor --repair beside a server: exit %d: %s", code, errs)
	}
}

// doctor --repair decides a holder's liveness by its socket and lock, not by
// meta.json: with meta.json emptied under a running session, it leaves the
// socket alone, the next server reconnects, and a restore cannot put a second
// writer on the log.
func TestDoctorKeepsLiveHolderWithoutMeta(t *testing.T) {
	t.Parallel()
	e := e2e.NewEnv(t)
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--name", "loop", "--", "sh", "-c", "i=0; while :; do i=$((i+1)); echo line-$i; sleep 0.05; done"))
	e2e.WaitFor(t, 10*time.Second, "output", func() bool { return strings.Contains(e.MustTk("capture", id), "line-3") })
	e.ShutdownServer()
	dir := filepath.Join(e.Dir, "sessions", id)
	if err := os.WriteFile(filepath.Join(dir, sessiondir.MetaFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, _ := e.Tk("doctor", "--repair")
	t.Logf("doctor --repair:\n%s", out)
	if !strings.Contains(out, "meta.json: cannot be read") || !strings.Contains(out, "but its holder runs") {
		t.Errorf("doctor did not say meta.json of a live holder cannot be read:\n%s", out)
	}
	if strings.Contains(out, "holder.sock: orphaned") {
		t.Errorf("doctor took a live holder's socket for an orphan:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, sessiondir.SocketFile)); err != nil {
		t.Fatalf("the live holder's socket is gone: %v", err)
	}
	e.StartServer()
	if s := e.Session(id); s.State != "running" {
		t.Fatalf("after doctor and a restart the session is %s, want running", s.State)
	}
	if _, errs, code := e.Tk("restore", id); code == 0 {
		t.Fatalf("restore of a running session succeeded: %s", errs)
	}
	// With its socket removed as well (by hand, or by an older doctor), the
	// holder's lock still tells the server it runs.
	e.ShutdownServer()
	os.Remove(filepath.Join(dir, sessiondir.SocketFile))
	e.StartServer()
	if s := e.Session(id); s.State != "running" {
		t.Fatalf("with its socket gone, a live holder's session is %s, want running", s.State)
	}
	if _, errs, code := e.Tk("restore", id); code == 0 {
		t.Fatalf("restore over a live holder succeeded: %s", errs)
	}
	// One writer: the lines stay in order, each once.
	e2e.WaitFor(t, 10*time.Second, "more output", func() bool { return strings.Contains(e.MustTk("capture", "--raw", id), "line-60") })
	raw := e.MustTk("capture", "--raw", id)
	next := 1
	for _, l := range strings.Split(raw, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "line-") {
			continue
		}
		if l != "line-"+strconv.Itoa(next) {
			t.Fatalf("line %q where line-%d belongs: two writers or a lost line", l, next)
		}
		next++
	}
}

// A session's restore settings (auto-restore, restore command, size policy,
// shell integration) are kept in meta.json, so a registry rebuilt from
// there keeps them: for a running session and for one that has exited.
func TestDoctorRebuildKeepsSettings(t *testing.T) {
	t.Parallel()
	e := e2e.NewEnv(t)
	e.StartServer()
	live := strings.TrimSpace(e.MustTk("new", "--name", "agent", "--auto-restore", "--restore-command", "echo resumed; exec cat",
		"--size-policy", "smallest", "--no-shell-integration", "--", "cat"))
	done := strings.TrimSpace(e.MustTk("new", "--name", "job", "--auto-restore", "--restore-command", "echo again", "--", "sh", "-c", "exit 3"))
	projDir, emptyDir := t.TempDir(), t.TempDir()
	e.MustTk("workspace", "add", "--auto-restore", "proj", projDir)
	e.MustTk("workspace", "add", "empty", emptyDir)
	plain := strings.TrimSpace(e.MustTk("new", "--name", "plain", "--workspace", "proj", "--cwd", t.TempDir(), "--", "sleep", "600"))
	e2e.WaitFor(t, 10*time.Second, "the job to exit", func() bool { return e.Session(done).State == "exited" })
	e.KillServer()

	ruinRegistry(t, e)
	out := e.MustTk("doctor", "--rebuild")
	if !strings.Contains(out, "3 session(s) recovered") {
		t.Fatalf("doctor --rebuild:\n%s", out)
	}

	e.StartServer()
	type settings struct {
		auto       bool
		restore    string
		sizePolicy string
		shellInit  bool
	}
	want := map[string]settings{
		live:  {true, "echo resumed; exec cat", "smallest", false},
		done:  {true, "echo again", "", true},
		plain: {false, "", "", true},
	}
	for id, w := range want {
		s := e.Session(id)
		got := settings{s.AutoRestore, s.RestoreCommand, s.SizePolicy, s.ShellIntegration}
		if got != w {
			t.Errorf("session %s (%s) after the rebuild: %+v, want %+v", s.Name, s.State, got, w)
		}
	}
	// Workspaces keep theirs from the copy beside the registry: their own
	// directory (not their first session's), and auto-restore; one without
	// sessions is made again too.
	wss, err := e.C.Workspaces(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, w := range wss {
		got[w.Name] = fmt.Sprintf("%s auto=%v", w.Dir, w.AutoRestore)
	}
	if want := map[string]string{"proj": projDir + " auto=true", "empty": emptyDir + " auto=false"}; !reflect.DeepEqual(got, want) {
		t.Errorf("workspaces after the rebuild: %v, want %v", got, want)
	}
	// The kept settings act: the holder of the auto-restore session dies
	// with the machine, and the next server restores it with its command.
	e.KillServer()
	m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", live))
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(m.HolderPid, syscall.SIGKILL)
	e.StartServer()
	e2e.WaitFor(t, 15*time.Second, "the auto-restore session to come back with its restore command", func() bool {
		s := e.Session(live)
		return s.State == "running" && strings.Contains(e.MustTk("capture", live), "resumed")
	})
	if s := e.Session(done); s.State != "exited" {
		t.Errorf("the exited job is %s after a restart, want exited: a finished job never runs again", s.State)
	}
}

// ruinRegistry writes garbage over the registry of a stopped server and
// removes its WAL, and returns its path.
func ruinRegistry(t *testing.T, e *e2e.Env) string {
	t.Helper()
	db := statedir.Dir(e.Dir).DB()
	if err := os.WriteFile(db, []byte(strings.Repeat("not a registry ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")
	return db
}

// An ended session whose meta.json a holder from before settings were kept
// wrote gets them from the next server, which writes meta.json holding the
// session's lock, so a rebuilt registry keeps them too.
func TestOldMetaGetsSettings(t *testing.T) {
	t.Parallel()
	e := e2e.NewEnv(t)
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--name", "job", "--auto-restore", "--restore-command", "echo again", "--", "sh", "-c", "exit 4"))
	e2e.WaitFor(t, 10*time.Second, "the job to exit", func() bool { return e.Session(id).State == "exited" })
	e.ShutdownServer()
	dir := filepath.Join(e.Dir, "sessions", id)
	var raw map[string]any
	b, err := os.ReadFile(filepath.Join(dir, sessiondir.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw, "auto_restore")
	delete(raw, "restore_command")
	b, _ = json.Marshal(raw)
	if err := os.WriteFile(filepath.Join(dir, sessiondir.MetaFile), b, 0o600); err != nil {
		t.Fatal(err)
	}

	e.StartServer()
	e.ShutdownServer()
	m, err := sessiondir.ReadMeta(dir)
	if err != nil || !m.AutoRestore || m.RestoreCommand != "echo again" || m.ExitCode == nil || *m.ExitCode != 4 {
		t.Fatalf("meta.json after a server start: %+v (%v), want the settings and exit status 4", m, err)
	}
	ruinRegistry(t, e)
	e.MustTk("doctor", "--rebuild")
	e.StartServer()
	if s := e.Session(id); !s.AutoRestore || s.RestoreCommand != "echo again" || s.State != "exited" {
		t.Errorf("after the rebuild: %s, auto-restore %v, restore command %q; want exited, true, echo again", s.State, s.AutoRestore, s.RestoreCommand)
	}
}
