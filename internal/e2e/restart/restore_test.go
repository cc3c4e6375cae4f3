package restart

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
)

// reboot simulates a machine restart: the server, every holder and every
// child are SIGKILLed (nothing gets to write an exit status), then a new
// server starts on the same state directory.
func reboot(e *e2e.Env) {
	e.T.Helper()
	killEverything(e)
	e.StartServer()
}

// killEverything SIGKILLs the server, every holder and every child, and
// waits until the holders are gone.
func killEverything(e *e2e.Env) {
	e.T.Helper()
	e.KillServer()
	metas, _ := filepath.Glob(filepath.Join(e.Dir, "sessions", "*", sessiondir.MetaFile))
	for _, p := range metas {
		m, err := sessiondir.ReadMeta(filepath.Dir(p))
		if err != nil || m.EndedAt != nil {
			continue
		}
		syscall.Kill(m.HolderPid, syscall.SIGKILL)
		syscall.Kill(-m.Pid, syscall.SIGKILL) // the child leads its own process group
		syscall.Kill(m.Pid, syscall.SIGKILL)
	}
	for _, p := range metas {
		m, _ := sessiondir.ReadMeta(filepath.Dir(p))
		e2e.WaitFor(e.T, 10*time.Second, "the killed holder to be gone", func() bool {
			return m.HolderPid == 0 || syscall.Kill(m.HolderPid, 0) != nil
		})
	}
}

// The reboot case: every process SIGKILLed; the next server lists the
// session interrupted, and restore starts bash in the directory it was in,
// with its history, its old screen above the restore line, and offsets
// going on from the old log's end.
func TestRestoreAfterReboot(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	e := e2e.NewEnv(t)
	e.StartServer()
	base := t.TempDir()
	work := filepath.Join(base, "a b")
	if err := os.MkdirAll(filepath.Join(work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"new", "--name", "r", "--cwd", work}, e2e.ShellEnv(t)...)
	id := strings.TrimSpace(e.MustTk(append(args, "--", "bash")...))
	e.MustTk("send", id, "cd sub && echo first-marker-$((6*7))")
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "first-marker-42", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	sub := filepath.Join(work, "sub")
	e2e.WaitFor(t, 10*time.Second, "the registry to show the new directory", func() bool {
		return e.Session(id).Cwd == sub
	})
	before := e.Session(id)
	old := e2e.Collect(t, e.C, id, 0, before.End)

	reboot(e)
	e2e.WaitFor(t, 10*time.Second, "the session to be interrupted", func() bool { return e.Session(id).State == "interrupted" })

	out, errs, code := e.Tk("restore", "r")
	if code != 0 || strings.TrimSpace(out) != id {
		t.Fatalf("restore: exit %d, %q %q", code, out, errs)
	}
	s := e.Session(id)
	if s.State != "running" {
		t.Fatalf("after restore: %+v", s)
	}
	// The pattern does not match this command line itself.
	e.MustTk("send", id, `pwd; history | grep -c "first-marker-[$]"`)
	// The history of the first shell is in the new one's (shell integration).
	// Only the new shell prints this: the old screen holds the directory too.
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "\n1\r", "--timeout", "20s"); code != 0 {
		t.Fatalf("the restored shell's history lacks the earlier command: %s\n%s", errs, e.MustTk("capture", id))
	}
	screen := e.MustTk("capture", id, "--scrollback", "100")
	iOld := strings.Index(screen, "first-marker-42")
	iLine := strings.Index(screen, "restored at ")
	iNew := strings.LastIndex(screen, sub)
	if iOld < 0 || iLine < iOld || iNew < iLine {
		t.Fatalf("want the old screen, then the restore line, then the new shell:\n%s", screen)
	}
	// Offsets go on from the old log: the bytes before are unchanged, and
	// the restore line follows them.
	after := e2e.Collect(t, e.C, id, 0, e.Session(id).End)
	if !bytes.HasPrefix(after, old) {
		t.Fatalf("the log's first %d bytes changed across the restore", len(old))
	}
	if !bytes.Contains(after[len(old):], []byte("restored at ")) {
		t.Fatalf("no restore line after the old output: %q", e2e.Tail(after[len(old):], 400))
	}
}

// --restore-command: a restore runs it instead of the original command.
func TestRestoreCommand(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--name", "agent", "--restore-command", `sh -c "echo resumed; exec cat"`,
		"--", "sh", "-c", "echo original; exec sleep 600"))
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "original", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	reboot(e)
	e2e.WaitFor(t, 10*time.Second, "the session to be interrupted", func() bool { return e.Session(id).State == "interrupted" })
	e.MustTk("restore", "agent")
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "resumed", "--timeout", "20s"); code != 0 {
		t.Fatalf("the restore command did not run: %s\n%s", errs, e.MustTk("capture", id))
	}
	// A running session is not restored again.
	if _, errs, code := e.Tk("restore", "agent"); code == 0 || !strings.Contains(errs, "running") {
		t.Fatalf("restore of a running session: exit %d %q", code, errs)
	}
	// An exited session restores on request only, and says how it ended.
	e.MustTk("kill", "agent")
	e.MustTk("restore", "agent")
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "previous process was ended", "--timeout", "20s"); code != 0 {
		t.Fatalf("restart line: %s\n%s", errs, e.MustTk("capture", id))
	}
}

// A directory that is gone: restore falls back to home and says so.
func TestRestoreFallbackDirectory(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	gone := filepath.Join(t.TempDir(), "project")
	os.MkdirAll(gone, 0o755)
	home := t.TempDir()
	id := strings.TrimSpace(e.MustTk("new", "--cwd", gone, "--env", "HOME="+home, "--no-shell-integration", "--", "sh"))
	reboot(e)
	e2e.WaitFor(t, 10*time.Second, "the session to be interrupted", func() bool { return e.Session(id).State == "interrupted" })
	os.RemoveAll(gone)
	out, errs, code := e.Tk("restore", id)
	if code != 0 || !strings.Contains(errs, gone+" no longer exists; starting in "+home) {
		t.Fatalf("restore: exit %d, %q %q; want a notice of the fallback", code, out, errs)
	}
	e.MustTk("send", id, "pwd")
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "\n"+home, "--timeout", "20s"); code != 0 {
		t.Fatalf("pwd: %s\n%s", errs, e.MustTk("capture", id))
	}
	// The banner names the directory: a long one wraps.
	if !strings.Contains(strings.ReplaceAll(e.MustTk("capture", id), "\n", ""), "no longer exists") {
		t.Fatal("the restore banner does not say the directory is gone")
	}
}

// --auto-restore: the server restores the session by itself after a reboot;
// a session without it stays interrupted.
func TestAutoRestore(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	auto := strings.TrimSpace(e.MustTk("new", "--auto-restore", "--", "sh", "-c", "echo run-$$; exec sleep 600"))
	manual := strings.TrimSpace(e.MustTk("new", "--", "sleep", "600"))
	if _, errs, code := e.Tk("wait", auto, "--from", "start", "--output", "run-", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	reboot(e)
	e2e.WaitFor(t, 20*time.Second, "the auto-restore session to run again", func() bool { return e.Session(auto).State == "running" })
	if _, errs, code := e.Tk("wait", auto, "--from", "start", "--output", "restored at", "--timeout", "20s"); code != 0 {
		t.Fatalf("no restore line: %s", errs)
	}
	if st := e.Session(manual).State; st != "interrupted" {
		t.Fatalf("the session without --auto-restore is %s, want interrupted", st)
	}
}

// A server stopped with SIGTERM leaves every session running; the next one
// has each screen as it was (model from the checkpoint and the log after
// it); `shutdown --sessions` is the explicit way to end them all.
func TestServerRestartIsInvisible(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	var ids []string
	for i := range 5 {
		id := strings.TrimSpace(e.MustTk("new", "--no-shell-integration", "--", "sh", "-c",
			`i=0; while [ $i -lt 3000 ]; do echo "line $i of `+string(rune('a'+i))+`"; i=$((i+1)); done; printf '\033[31mred\033[0m\n'; exec cat`))
		ids = append(ids, id)
	}
	screens := map[string]string{}
	for _, id := range ids {
		if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "red", "--timeout", "20s"); code != 0 {
			t.Fatalf("wait: %s", errs)
		}
		screens[id] = e.MustTk("capture", "--ansi", "--scrollback", "50", id)
	}
	pids := map[string]int{}
	for _, id := range ids {
		pids[id] = *e.Session(id).Pid
	}
	e.Srv.Cmd.Process.Signal(syscall.SIGTERM)
	e.Srv.Wait()
	e.Srv = nil
	for id, pid := range pids {
		if syscall.Kill(pid, 0) != nil {
			t.Fatalf("session %s's process %d died with the server", id, pid)
		}
	}
	e.StartServer()
	for _, id := range ids {
		if s := e.Session(id); s.State != "running" {
			t.Fatalf("after restart: %+v", s)
		}
		if got := e.MustTk("capture", "--ansi", "--scrollback", "50", id); got != screens[id] {
			t.Fatalf("session %s's screen changed across the restart:\n%s\nwant\n%s", id, got, screens[id])
		}
	}
	e.MustTk("shutdown", "--sessions")
	e.Srv.Wait()
	e.Srv = nil
	for id, pid := range pids {
		e2e.WaitFor(t, 10*time.Second, "session "+id+"'s process to end", func() bool { return syscall.Kill(pid, 0) != nil })
	}
}
