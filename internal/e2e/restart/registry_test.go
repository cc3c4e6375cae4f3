package restart

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
)

// The registry locked by another process: at start the server says so,
// naming the process, and touches no session; while it runs a create
// fails with 503 and the same sentence, and running sessions and their
// viewers go on. Once the lock is gone everything works again.
func TestRegistryLocked(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	keep := strings.TrimSpace(e.MustTk("new", "--name", "keep", "--", "cat"))
	db := statedir.Dir(e.Dir).DB()
	holderBy := fmt.Sprintf("is locked by another process (pid %d, ", os.Getpid())

	// While the server runs.
	unlock := lockRegistry(t, db)
	_, errs, code := e.Tk("new", "--", "cat")
	want := "termkeep: the registry " + db + " " + holderBy
	if code != 1 || !strings.HasPrefix(errs, want) || !strings.Contains(errs, "so no session can be created or restored now (running sessions go on); stop that process or end its transaction, then try again") {
		t.Errorf("termkeep new under a lock: exit %d, stderr %q; want it to start %q", code, errs, want)
	}
	t.Logf("termkeep new: %s", errs)
	expect503(e, "locked", holderBy)
	e.SessionWorks("keep", "under-lock")
	unlock()
	if id := strings.TrimSpace(e.MustTk("new", "--name", "after", "--", "cat")); id == "" {
		t.Error("no session created once the lock was gone")
	}
	e.NoHalfSessions(2)

	// At start.
	e.KillServer()
	unlock = lockRegistry(t, db)
	out := serveFails(e)
	startFailure(e, out, "the registry "+db+" "+holderBy)
	if !strings.Contains(out, "stop that process or end its transaction, then start termkeep again") {
		t.Errorf("the server's message says no fix:\n%s", out)
	}
	e.HolderLives(keep)
	unlock()
	e.StartServer()
	e.SessionWorks(keep, "after-lock")
}

// The state directory read-only (a read-only bind mount over it): at start
// the server says the registry is read-only and how to fix it; while it
// runs a create fails with 503 and a sentence, and running sessions go on.
func TestRegistryReadOnly(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	keep := strings.TrimSpace(e.MustTk("new", "--name", "keep", "--", "cat"))
	db := statedir.Dir(e.Dir).DB()

	// While the server runs. The registry's files stay writable through
	// the descriptors the server opened before the mount (Linux refuses to
	// remount a file system read-only while files on it are open for
	// writing), so it is the new session's directory that cannot be made.
	remount := readOnly(t, e.Dir)
	_, errs, code := e.Tk("new", "--", "cat")
	want := "termkeep: the state directory " + e.Dir + " is read-only ("
	if code != 1 || !strings.HasPrefix(errs, want) || !strings.Contains(errs, "read-only file system), so no session can be created or restored now (running sessions go on); remount it read-write, then try again") {
		t.Errorf("termkeep new on a read-only state directory: exit %d, stderr %q; want it to start %q", code, errs, want)
	}
	t.Logf("termkeep new: %s", errs)
	expect503(e, "read-only", "is read-only")
	e.SessionWorks("keep", "while-read-only")
	remount()
	e.MustTk("new", "--name", "after", "--", "cat")
	e.NoHalfSessions(2)

	// At start.
	e.KillServer()
	remount = readOnly(t, e.Dir)
	out := serveFails(e)
	startFailure(e, out, "the registry "+db+" is read-only: "+e.Dir+" is on a read-only file system; remount it read-write")
	e.HolderLives(keep)
	remount()
	e.StartServer()
	e.SessionWorks(keep, "after-read-only")
}

// A damaged registry (garbage over its header, or a truncated file): the
// server refuses to start, says to run doctor --rebuild, and touches no
// session; after the rebuild the next server has the session live, same
// id, same name.
func TestRegistryCorrupt(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, db string)
	}{
		{"garbage", func(t *testing.T, db string) {
			f, err := os.OpenFile(db, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(bytes.Repeat([]byte("garbage!"), 64), 0); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated", func(t *testing.T, db string) {
			if err := os.Truncate(db, 4096+100); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := e2e.NewEnv(t)
			e.StartServer()
			keep := strings.TrimSpace(e.MustTk("new", "--name", "keep", "--", "cat"))
			// A clean stop folds the WAL into the file, so the damage is
			// all there is.
			e.ShutdownServer()
			db := statedir.Dir(e.Dir).DB()
			if st, err := os.Stat(db); err != nil || st.Size() < 4*4096 {
				t.Fatalf("the registry is too small to cut: %v", err) // a page per table and index
			}
			tc.damage(t, db)

			out := serveFails(e)
			startFailure(e, out, "the registry "+db+` is damaged: run "termkeep doctor --rebuild" to rebuild it from the sessions' meta.json files (live sessions are kept), then start termkeep again`)
			e.HolderLives(keep)
			t.Logf("doctor --rebuild:\n%s", e.MustTk("doctor", "--rebuild"))
			e.StartServer()
			if s := e.Session(keep); s.State != "running" || s.Name != "keep" {
				t.Errorf("after the rebuild: %s is %s, named %q; want running, named keep", keep, s.State, s.Name)
			}
			e.SessionWorks("keep", "after-rebuild")
		})
	}
}

// lockRegistry holds the registry's write lock, as a program with an open
// write transaction does, until the returned function is called.
func lockRegistry(t *testing.T, db string) (unlock func()) {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?_txlock=immediate&_pragma=busy_timeout(20000)")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin()
	if err != nil {
		conn.Close()
		t.Fatalf("lock the registry: %v", err)
	}
	done := false
	unlock = func() {
		if !done {
			done = true
			tx.Rollback()
			conn.Close()
		}
	}
	t.Cleanup(unlock)
	return unlock
}

// readOnly bind-mounts dir over itself read-only until the returned
// function is called; it skips the test where that cannot be done (not
// root, no mount namespace of its own to do it in).
func readOnly(t *testing.T, dir string) (undo func()) {
	t.Helper()
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount %s (needs root, or CAP_SYS_ADMIN): %v", dir, err)
	}
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		syscall.Unmount(dir, 0)
		t.Skipf("cannot remount %s read-only: %v", dir, err)
	}
	done := false
	undo = func() {
		if done {
			return
		}
		done = true
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	}
	t.Cleanup(undo)
	return undo
}

// serveFails runs `termkeep serve`, which must exit with an error within
// a minute, and returns what it printed (stdout, stderr: the log too).
func serveFails(e *e2e.Env) string {
	e.T.Helper()
	cmd := exec.Command(e2e.TkBin, "serve", "--state-dir", e.Dir, "--listen", "off")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		e.T.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			e.T.Fatalf("the server started:\n%s", out.String())
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		e.T.Fatalf("the server neither started nor exited within a minute:\n%s", out.String())
	}
	return out.String()
}

// startFailure checks that a server that refused to start said want on
// stderr, as the CLI prints errors, and in its log.
func startFailure(e *e2e.Env, out, want string) {
	e.T.Helper()
	e.T.Logf("termkeep serve:\n%s", out)
	if !strings.Contains(out, "\ntermkeep: "+want) && !strings.HasPrefix(out, "termkeep: "+want) {
		e.T.Errorf("the server's error does not say %q", want)
	}
	if !strings.Contains(out, `level=ERROR msg="`+strings.ReplaceAll(want, `"`, `\"`)) {
		e.T.Errorf("the server's log does not say %q", want)
	}
}

// expect503 creates a session through the client: it must fail with 503
// Service Unavailable and a message containing want.
func expect503(e *e2e.Env, what, want string) {
	e.T.Helper()
	_, err := e.C.Create(context.Background(), api.CreateRequest{Command: []string{"cat"}, Cwd: "/"})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 503 || !strings.Contains(ce.Message, want) {
		e.T.Errorf("create with the registry %s: %v, want 503 saying %q", what, err, want)
	}
}

// A command that starts a server in the background on a damaged registry
// says why that server did not start: its own sentence, read from what this
// start appended to server.log, and then where the log is.
func TestAutostartSaysWhy(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	db := statedir.Dir(e.Dir).DB()
	if err := os.WriteFile(db, bytes.Repeat([]byte("garbage!"), 1024), 0o600); err != nil {
		t.Fatal(err)
	}
	// Runs before e2e.NewEnv's cleanup, which starts a server to end sessions.
	t.Cleanup(func() {
		files, _ := filepath.Glob(db + "*")
		for _, f := range files {
			os.Remove(f)
		}
	})
	log := filepath.Join(e.Dir, "server.log")
	if err := os.WriteFile(log, []byte("termkeep: an older start's failure\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(e2e.TkBin, "--state-dir", e.Dir, "ls")
	cmd.Env = append(os.Environ(), "TERMKEEP_LISTEN=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("termkeep ls on a damaged registry: %v, want exit 1; stderr %q", err, stderr.String())
	}
	got := stderr.String()
	t.Logf("termkeep ls: %s", got)
	want := "termkeep: the termkeep server did not start: the registry " + db + ` is damaged: run "termkeep doctor --rebuild"`
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "then start termkeep again (its log: "+log+")\n") ||
		strings.Count(got, "\n") != 1 || stdout.Len() != 0 {
		t.Errorf("termkeep ls printed %q on stderr and %q on stdout; want one line starting %q, naming the log", got, stdout.String(), want)
	}
}

// A WAL garbled after a SIGKILL of the server rolls the registry back to
// its last checkpoint, here to empty, and SQLite opens it without a word.
// The generation kept beside the registry tells: doctor reports the
// rollback as an error until doctor --rebuild has adopted the sessions
// again from their meta.json, and the next server says so in its log and
// in an event. Nothing is lost that meta.json or the workspaces' copy
// keeps: the auto-restore setting and the workspace are back.
func TestRegistryRollbackDetected(t *testing.T) {
	t.Parallel()
	e := e2e.NewEnv(t)
	e.StartServer()
	keep := strings.TrimSpace(e.MustTk("new", "--name", "keep", "--auto-restore", "--", "cat"))
	done := strings.TrimSpace(e.MustTk("new", "--name", "done", "--", "sh", "-c", "exit 5"))
	e.MustTk("workspace", "add", "proj", t.TempDir())
	e2e.WaitFor(t, 10*time.Second, "the short job to exit", func() bool { return e.Session(done).State == "exited" })
	e.KillServer()

	db := statedir.Dir(e.Dir).DB()
	wal, err := os.ReadFile(db + "-wal")
	if err != nil || len(wal) < 32+24+4096 {
		t.Fatalf("no WAL to garble after a SIGKILL (%d bytes): %v", len(wal), err)
	}
	t.Logf("the WAL after the SIGKILL: %d bytes", len(wal))
	// Garbage over the first frame's page: its checksum fails, and SQLite
	// drops that frame and every one after it.
	f, err := os.OpenFile(db+"-wal", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte("garbled!"), 64), 32+24+1000); err != nil {
		t.Fatal(err)
	}
	f.Close()

	out, _, code := e.Tk("doctor")
	t.Logf("doctor:\n%s", out)
	if code != 1 || !strings.Contains(out, "error registry") || !strings.Contains(out, "rolled back from generation") || !strings.Contains(out, "--rebuild") {
		t.Fatalf("doctor after a rollback: exit %d, want 1 with an error that names the rollback and --rebuild:\n%s", code, out)
	}

	// A server started on it says so too, once in an event, and adopts
	// the session directories the registry lost.
	e.StartServer()
	logb, _ := os.ReadFile(filepath.Join(e.Dir, "server.log"))
	if !bytes.Contains(logb, []byte(`level=ERROR msg="the registry `+db+` rolled back from generation`)) {
		t.Errorf("the server's log does not report the rollback:\n%s", logb)
	}
	if events := rolledBackEvents(e); len(events) != 1 {
		t.Errorf("%d registry.rolled_back events, want 1: %+v", len(events), events)
	}
	e.ShutdownServer()
	e.StartServer()
	e.ShutdownServer()
	out, _, code = e.Tk("doctor")
	if code != 1 || !strings.Contains(out, "rolled back from generation") {
		t.Errorf("doctor after a server started on the rolled-back registry: exit %d, want 1 naming the rollback:\n%s", code, out)
	}

	out = e.MustTk("doctor", "--rebuild")
	t.Logf("doctor --rebuild:\n%s", out)
	if !strings.Contains(out, "rolled back from generation") || !strings.Contains(out, "[repaired") {
		t.Errorf("doctor --rebuild did not repair the rollback:\n%s", out)
	}
	if out, _, code := e.Tk("doctor"); code != 0 || strings.Contains(out, "rolled back") {
		t.Errorf("doctor after the rebuild: exit %d, want 0 with no rollback:\n%s", code, out)
	}
	e.StartServer()
	if n := len(rolledBackEvents(e)); n != 1 {
		t.Errorf("%d registry.rolled_back events after the rebuild, want still 1", n)
	}
	if s := e.Session(keep); s.State != "running" || !s.AutoRestore || s.Name != "keep" {
		t.Errorf("session keep after the rollback: %s, auto-restore %v, name %q; want running, true, keep", s.State, s.AutoRestore, s.Name)
	}
	if s := e.Session(done); s.State != "exited" || s.ExitCode == nil || *s.ExitCode != 5 {
		t.Errorf("session done after the rollback: %s (%v), want exited 5", s.State, s.ExitCode)
	}
	if out := e.MustTk("workspace", "ls"); !strings.Contains(out, "proj") {
		t.Errorf("workspace proj, lost in the rollback, was not made again from the copy beside the registry:\n%s", out)
	}
	e.SessionWorks("keep", "after-rollback")
}

// rolledBackEvents are the registry.rolled_back events kept.
func rolledBackEvents(e *e2e.Env) []api.Event {
	var out []api.Event
	for _, ev := range e.Events() {
		if ev.Kind == "registry.rolled_back" {
			out = append(out, ev)
		}
	}
	return out
}

// A registry put back to an older copy of itself (a backup restored, a
// WAL lost) is a rollback too, and then it is the registry that is behind
// a live holder's meta.json: the server takes the name the session was
// renamed to from there, instead of sending the holder the old name, which
// would have lost the new one from meta.json as well.
func TestRollbackKeepsNewerName(t *testing.T) {
	t.Parallel()
	w := e2e.NewWebEnv(t)
	e := w.Env
	id := strings.TrimSpace(e.MustTk("new", "--name", "first", "--", "cat"))
	e.ShutdownServer() // folds the WAL into the file
	db := statedir.Dir(e.Dir).DB()
	older, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	e.StartServer()
	u, err := os.ReadFile(filepath.Join(e.Dir, "url"))
	if err != nil {
		t.Fatal(err)
	}
	w.Base = strings.TrimSuffix(strings.TrimSpace(string(u)), "/")
	w.API("PATCH", "/api/sessions/"+id, map[string]any{"name": "second"}, 200, nil)
	e2e.WaitFor(t, 10*time.Second, "the new name in meta.json", func() bool {
		m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", id))
		return err == nil && m.Name == "second"
	})
	e.ShutdownServer()
	if err := os.WriteFile(db, older, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")

	e.StartServer()
	if s := e.Session(id); s.Name != "second" || s.State != "running" {
		t.Errorf("after the rollback the session is %s named %q, want running named second (from meta.json)", s.State, s.Name)
	}
	e.ShutdownServer()
	if m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", id)); err != nil || m.Name != "second" {
		t.Errorf("meta.json after the rollback names %q (%v), want second", m.Name, err)
	}
	if out, _, code := e.Tk("doctor"); code != 1 || !strings.Contains(out, "rolled back from generation") {
		t.Errorf("doctor after a registry put back to an older copy: exit %d, want 1 naming the rollback:\n%s", code, out)
	}
}
