package viewers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// A holder that stops answering (SIGSTOP here; a wedged or starved process
// alike) costs its session's operations only a bounded wait. With 5 MB of
// input pending on it, `send` fails promptly and says why, and a later
// `send` does too; the session is shown `unresponsive` in `ls`, the API
// and to its viewers; `kill` ends it by SIGKILL of the holder and says so;
// `rm --force` removes another such session, and one continued answers
// again. Before, each of these hung until the client gave up, and `kill`
// blamed a SIGKILL it never sent.
func TestHungHolder(t *testing.T) {
	e := e2e.NewEnv(t)
	// A holder silent for 1.5 s (ping interval plus timeout) is
	// unresponsive; a write it does not take within 1 s fails.
	e.ServerArgs = []string{"--holder-timeout", "1s"}
	e.StartServer()

	stop := func(id string) (holderPid, childPid int) {
		t.Helper()
		m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", id))
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(m.HolderPid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		// Never leave a stopped process behind, whatever happens.
		t.Cleanup(func() { syscall.Kill(m.HolderPid, syscall.SIGCONT) })
		return m.HolderPid, m.Pid
	}

	id := strings.TrimSpace(e.MustTk("new", "--name", "hung", "--", "cat"))
	other := strings.TrimSpace(e.MustTk("new", "--name", "hung2", "--", "cat"))
	viewer := e2e.OpenViewer(t, e, id, wire.Hello{From: wire.FromEnd})
	e.SessionWorks(id, "before-the-stop")
	holderPid, childPid := stop(id)
	stop(other)

	// 5 MB of input: more than the socket and the pty can hold.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	began := time.Now()
	err := e.C.Input(ctx, id, bytes.Repeat([]byte("x"), 5<<20))
	took := time.Since(began)
	if err == nil || errors.Is(err, context.DeadlineExceeded) || took > 30*time.Second {
		t.Fatalf("5 MB of input to a stopped holder: %v after %s; want an error well before the client's 60 s", err, took.Round(time.Millisecond))
	}
	t.Logf("5 MB to a stopped holder: %v (%s)", err, took.Round(time.Millisecond))
	if !strings.Contains(err.Error(), "holder") {
		t.Errorf("the error does not say what is wrong: %v", err)
	}

	began = time.Now()
	_, serr, code := e.Tk("send", id, "later")
	if code == 0 || time.Since(began) > 30*time.Second {
		t.Fatalf("a later send: exit %d after %s (%s); want a prompt failure", code, time.Since(began).Round(time.Millisecond), serr)
	}

	e2e.WaitFor(t, 30*time.Second, "the session shown unresponsive in the API", func() bool { return e.Session(id).Unresponsive })
	if out := e.MustTk("ls"); !strings.Contains(out, "unresponsive") {
		t.Errorf("ls does not show the stopped holder as unresponsive:\n%s", out)
	}
	viewer.Until("a viewers frame saying the holder does not answer", func(f wire.Frame) bool {
		var v wire.Viewers
		return f.Type == wire.TypeViewers && json.Unmarshal(f.Payload, &v) == nil && v.HolderUnresponsive
	})

	began = time.Now()
	_, kerr, code := e.Tk("kill", id)
	if code != 0 {
		t.Fatalf("kill of a session whose holder is stopped: exit %d: %s", code, kerr)
	}
	t.Logf("kill (%s): %s", time.Since(began).Round(time.Millisecond), strings.TrimSpace(kerr))
	if !strings.Contains(kerr, "SIGKILL") || !strings.Contains(kerr, "holder") {
		t.Errorf("kill does not say that it killed the holder: %q", kerr)
	}
	s := e.Session(id)
	if s.State != "closed" || !strings.Contains(s.Reason, "SIGKILL") {
		t.Errorf("after kill: state %q, reason %q; want closed, saying the holder was killed", s.State, s.Reason)
	}
	e2e.WaitFor(t, 30*time.Second, "the holder and the child gone", func() bool {
		return gone(holderPid) && gone(childPid)
	})

	// Stopped with nothing pending, a holder takes the close frame into its
	// socket and does nothing: the kill waits until it is judged
	// unresponsive, then SIGKILLs it (before, it failed after 13 s blaming
	// a SIGKILL it never sent).
	quiet := strings.TrimSpace(e.MustTk("new", "--name", "hung3", "--", "cat"))
	quietHolder, _ := stop(quiet)
	_, kerr, code = e.Tk("kill", quiet)
	if code != 0 || !strings.Contains(kerr, "SIGKILL") {
		t.Fatalf("kill of a stopped holder with nothing pending: exit %d: %s", code, kerr)
	}
	e2e.WaitFor(t, 30*time.Second, "the quiet holder gone", func() bool { return gone(quietHolder) })

	// A holder continued after it was judged unresponsive answers again,
	// and its session works as before.
	resumed := strings.TrimSpace(e.MustTk("new", "--name", "resumed", "--", "cat"))
	resumedHolder, _ := stop(resumed)
	e2e.WaitFor(t, 30*time.Second, "the stopped holder shown unresponsive", func() bool { return e.Session(resumed).Unresponsive })
	syscall.Kill(resumedHolder, syscall.SIGCONT)
	e2e.WaitFor(t, 30*time.Second, "the continued holder answering again", func() bool { return !e.Session(resumed).Unresponsive })
	e.SessionWorks(resumed, "after-the-continue")

	if _, rerr, code := e.Tk("rm", "--force", other); code != 0 {
		t.Fatalf("rm --force of a session whose holder is stopped: exit %d: %s", code, rerr)
	}
	for _, s := range e.Ls() {
		if s.ID == other {
			t.Errorf("rm --force left the session listed: %+v", s)
		}
	}
}

// gone reports whether pid has ended (a zombie counts: it runs nothing).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, rest, _ := bytes.Cut(b, []byte(") "))
	return len(rest) > 0 && rest[0] == 'Z'
}

// A server that starts while a holder is stopped finds its socket taking
// connections and the holder saying nothing: the session is listed
// running and unresponsive (not interrupted: a restore would put a second
// holder on its log), and kill ends it by SIGKILL of the holder.
func TestHungHolderAtServerStart(t *testing.T) {
	e := e2e.NewEnv(t)
	e.ServerArgs = []string{"--holder-timeout", "1s"}
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--name", "stopped", "--", "cat"))
	m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", id))
	if err != nil {
		t.Fatal(err)
	}
	e.ShutdownServer()
	if err := syscall.Kill(m.HolderPid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(m.HolderPid, syscall.SIGCONT) })
	e.StartServer()

	s := e.Session(id)
	if s.State != "running" || !s.Unresponsive {
		t.Fatalf("a stopped holder at start: state %q, unresponsive %v; want running and unresponsive", s.State, s.Unresponsive)
	}
	_, kerr, code := e.Tk("kill", id)
	if code != 0 || !strings.Contains(kerr, "SIGKILL") {
		t.Fatalf("kill: exit %d: %s", code, kerr)
	}
	e2e.WaitFor(t, 30*time.Second, "the holder gone", func() bool { return gone(m.HolderPid) })
	if s := e.Session(id); s.State != "closed" {
		t.Errorf("after kill: state %q (%s), want closed", s.State, s.Reason)
	}
}
