package restart

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
	"termkeep/internal/logind/logindtest"
	"termkeep/internal/sessiondir"
)

// A shutdown where logind runs (a private bus with a fake logind): the
// server holds a delay inhibitor lock; at PrepareForShutdown(true) it
// readies every running session and lets the lock go, well within
// logind's 5 s; then systemd's signals come (SIGTERM to every process,
// SIGKILL 2 s later), and one holder is SIGKILLed before any SIGTERM.
// The next server finds every session interrupted with cause shutdown,
// and restore --all brings them back.
func TestShutdownWithLogind(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	bus := logindtest.StartBus(t)
	fake := logindtest.NewLogind(t, bus.Address)
	e := e2e.NewEnv(t)
	e.ServerEnv = append(e.ServerEnv, "DBUS_SYSTEM_BUS_ADDRESS="+bus.Address)
	e.StartServer()

	srv := e.Srv.Cmd.Process.Pid
	heldBy := func(pid int) bool {
		locks := fake.Locks()
		if len(locks) != 1 {
			return false
		}
		held, err := locks[0].HeldBy(pid)
		return err == nil && held
	}
	e2e.WaitFor(t, 10*time.Second, "the server to hold logind's delay lock", func() bool { return heldBy(srv) })
	if lk := fake.Locks()[0]; lk.What != "shutdown" || lk.Mode != "delay" || lk.Who != "termkeep" {
		t.Fatalf("lock %+v, want a delay lock on shutdown by termkeep", lk)
	}

	// Made through the API: a CLI process per step, built with the race
	// detector, costs a second on a loaded machine. Made once the lock is
	// held: no holder may inherit it, or it would outlive its release.
	var ids []string
	for _, name := range []string{"stopped", "killed"} {
		s, err := e.C.Create(context.Background(), api.CreateRequest{
			Name: name, Command: []string{"sh", "-c", "echo run; exec sleep 600"}, Cwd: e.Dir,
			Env: []string{"PATH=" + os.Getenv("PATH")}, NoShellIntegration: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	t0 := time.Now()
	if err := fake.PrepareForShutdown(true); err != nil {
		t.Fatal(err)
	}
	e2e.WaitFor(t, 10*time.Second, "the server to let the lock go", func() bool { return !heldBy(srv) })
	if took := time.Since(t0); took > 3*time.Second {
		t.Fatalf("the lock was held %s after PrepareForShutdown; logind waits 5 s at most", took)
	}
	t.Logf("ready for the shutdown in %s", time.Since(t0).Round(time.Millisecond))
	// Every holder recorded the coming shutdown before the lock went, and
	// none holds the lock.
	var killed int
	for _, id := range ids {
		m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", id))
		if err != nil || m.ShutdownAt == nil || m.EndedAt != nil {
			t.Fatalf("session %s's meta.json after the lock went: shutdown_at %v, ended %v (%v)", id, m.ShutdownAt, m.EndedAt, err)
		}
		if heldBy(m.HolderPid) || heldBy(m.Pid) {
			t.Fatalf("session %s's holder (pid %d) or child (pid %d) holds the lock", id, m.HolderPid, m.Pid)
		}
		killed = m.HolderPid
	}

	// systemd's last SIGKILL, for one holder that never got to its end.
	syscall.Kill(killed, syscall.SIGKILL)
	e2e.WaitFor(t, 10*time.Second, "the killed holder to be gone", func() bool { return syscall.Kill(killed, 0) != nil })
	machineStop(e)
	e.StartServer()
	for _, id := range ids {
		ended(e, id)
		s := e.Session(id)
		if s.State != "interrupted" || s.Cause != "shutdown" || s.CauseText != "the machine shut down" || !s.Restorable {
			t.Fatalf("session %s after the shutdown: %+v; want interrupted, cause shutdown, restorable", id, s)
		}
	}
	if out, errs, code := e.Tk("restore", "--all"); code != 0 {
		t.Fatalf("restore --all: exit %d: %s%s", code, out, errs)
	}
	for _, id := range ids {
		e2e.WaitFor(t, 20*time.Second, "session "+id+" to run again", func() bool { return e.Session(id).State == "running" })
	}
}
