package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/statedir"
)

// background starts termkeep with args (autostart on, as a user runs it),
// its output to out when not "", and stops it when the test ends.
func background(t *testing.T, e *e2e.Env, out string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(e2e.TkBin, append([]string{"--state-dir", e.Dir}, args...)...)
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// After `termkeep shutdown` the clients it left (two attaches, a wait,
// an events --follow) start no server in the background: none runs 10 s
// later (they used to start one within 1 to 4 s), and doctor --repair,
// which takes the server's lock, runs. A command the user types starts
// one, and the attaches reconnect to it.
func TestShutdownSticks(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel()
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "s", "--", "sh")
	a := startAttach(t, e, "s", true)
	b := startAttach(t, e, "s", true)
	wait := background(t, e, "", "wait", "s", "--output", "never-printed", "--timeout", "120s")
	events := filepath.Join(t.TempDir(), "events")
	follow := background(t, e, events, "events", "--follow")
	e2e.WaitFor(t, 20*time.Second, "both attaches", func() bool { return e.Session("s").Viewers == 2 })
	// Connected, not still starting: a command that finds no server at
	// its start is the user's own and starts one.
	e2e.WaitFor(t, 20*time.Second, "events --follow to connect", func() bool {
		b, _ := os.ReadFile(events)
		return strings.Contains(string(b), "viewer.attached")
	})
	e2e.WaitFor(t, 20*time.Second, "wait to connect", func() bool { return holdsSocket(wait.Process.Pid) })

	e.ShutdownServer()
	if !statedir.Dir(e.Dir).StoppedOnPurpose() {
		t.Fatal("the shutdown left no mark in the state directory")
	}
	// The clients retry after 0.1, 0.3, 0.7, 1.5, 3.1 s and every 2 s
	// from then on: by 10 s each has looked for a server six times.
	time.Sleep(10 * time.Second)
	if h, err := e.C.Health(context.Background()); err == nil {
		t.Fatalf("a server (pid %d) runs after the shutdown: a client started it", h.Pid)
	}
	if out, errs, code := e.Tk("doctor", "--repair"); code != 0 {
		t.Fatalf("doctor --repair after the shutdown: exit %d: %s%s", code, out, errs)
	}
	for _, p := range []*attachPty{a, b} {
		select {
		case <-p.done:
			t.Fatalf("an attach ended after the shutdown: %q", e2e.Tail(p.bytes(), 300))
		default:
		}
	}
	for _, c := range []*exec.Cmd{wait, follow} {
		if err := syscall.Kill(c.Process.Pid, 0); err != nil {
			b, _ := os.ReadFile(events)
			t.Fatalf("%v ended after the shutdown (%v): %s", c.Args[3:], err, b)
		}
	}

	// The user's own command starts a server; the attaches come back.
	if out, err := exec.Command(e2e.TkBin, "--state-dir", e.Dir, "ls").CombinedOutput(); err != nil {
		t.Fatalf("ls: %v: %s", err, out)
	}
	if statedir.Dir(e.Dir).StoppedOnPurpose() {
		t.Fatal("the mark outlived the next server's start")
	}
	e2e.WaitFor(t, 20*time.Second, "both attaches to reconnect", func() bool { return e.Session("s").Viewers == 2 })
	a.typ("echo back-$((20+2))\r")
	a.waitOutput("back-22")
	id := strings.TrimSpace(e.MustTk("new", "--", "true"))
	e2e.WaitFor(t, 20*time.Second, "events --follow to go on with the new server", func() bool {
		b, _ := os.ReadFile(events)
		return strings.Contains(string(b), id)
	})
	stopAdopted(t, e)
}

// holdsSocket reports whether process pid has a socket open: a wait's
// connection to the server, once it has started.
func holdsSocket(pid int) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, _ := os.ReadDir(dir)
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			return true
		}
	}
	return false
}

// stopAdopted ends every session and the server a client started (not
// e.Srv, which the env's cleanup waits for) and waits until it is gone.
func stopAdopted(t *testing.T, e *e2e.Env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e.C.Shutdown(ctx, true)
	e2e.WaitFor(t, 20*time.Second, "the server to stop", func() bool {
		_, err := e.C.Health(context.Background())
		return err != nil
	})
}

// A server that dies unexpectedly (SIGKILL) leaves no mark, and its
// clients start another at once; SIGTERM (a service stop) is a stop on
// purpose, as a shutdown is.
func TestKilledServerStartsAgain(t *testing.T) {
	t.Parallel()
	e := e2e.NewEnv(t)
	dir := statedir.Dir(e.Dir)
	e.StartServer()
	e.Srv.Cmd.Process.Signal(syscall.SIGTERM)
	e.Srv.Wait()
	e.Srv = nil
	if !dir.StoppedOnPurpose() {
		t.Fatal("SIGTERM left no mark in the state directory")
	}
	e.StartServer()
	if dir.StoppedOnPurpose() {
		t.Fatal("the mark outlived the next server's start")
	}
	e.MustTk("new", "--name", "k", "--", "sh")
	a := startAttach(t, e, "k", true)
	background(t, e, "", "wait", "k", "--output", "never-printed", "--timeout", "120s")
	e2e.WaitFor(t, 20*time.Second, "the attach", func() bool { return e.Session("k").Viewers == 1 })
	h, _ := e.C.Health(context.Background())
	e.KillServer()
	if _, err := os.Lstat(dir.Stopped()); err == nil {
		t.Fatal("a SIGKILL left a mark")
	}
	e2e.WaitFor(t, 20*time.Second, "a client to start a server again", func() bool {
		now, err := e.C.Health(context.Background())
		return err == nil && now.Pid != h.Pid
	})
	e2e.WaitFor(t, 20*time.Second, "the attach to reconnect", func() bool { return e.Session("k").Viewers == 1 })
	a.typ("echo back-$((30+3))\r")
	a.waitOutput("back-33")
	stopAdopted(t, e)
}
