package cli

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"termkeep/internal/e2e"
)

// What a tmux user types first works: new -s, list-sessions, list,
// attach -t, kill-session -t; and `new work` says how to name a session.
func TestTmuxHabits(t *testing.T) {
	t.Parallel()
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "-s", "h1", "--", "cat")
	for _, ls := range []string{"ls", "list", "list-sessions"} {
		if out := e.MustTk(ls); !strings.Contains(out, "h1") {
			t.Errorf("%s does not list h1:\n%s", ls, out)
		}
	}
	if _, errs, code := e.Tk("new", "work"); code != 2 || !strings.Contains(errs, "termkeep new --name work") {
		t.Errorf("new work: exit %d %q, want 2 with a hint at --name", code, errs)
	}
	if _, errs, code := e.Tk("attach", "-t", "h1", "h1"); code != 2 || !strings.Contains(errs, "once") {
		t.Errorf("attach -t h1 h1: exit %d %q", code, errs)
	}
	a := startAttach(t, e, "", true, "-t", "h1")
	a.pty.Write([]byte("via-target\r"))
	a.waitOutput("via-target")
	a.pty.Write([]byte{0x1c})
	if code := a.exitCode(); code != 0 {
		t.Errorf("attach -t: exit %d", code)
	}
	e.MustTk("kill-session", "-t", "h1")
	if s := e.Session("h1"); s.State != "closed" {
		t.Errorf("after kill-session -t: %s", s.State)
	}
}

// attach -d takes the session over: the other terminals are detached (and
// exit, rather than reconnect), browsers and the one that asked stay.
func TestAttachDetachesOthers(t *testing.T) {
	t.Parallel()
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "d", "--", "cat")
	first := startAttach(t, e, "d", true)
	second := startAttach(t, e, "d", true)
	// Raw mode comes before the server has the viewer: -d detaches those
	// attached when it asks.
	e2e.WaitFor(t, 20*time.Second, "both attached", func() bool { return e.Session("d").Viewers == 2 })
	taker := startAttach(t, e, "d", true, "-d")
	for _, a := range []*attachPty{first, second} {
		a.waitOutput("detached: the session was attached elsewhere")
		if code := a.exitCode(); code != 0 {
			t.Errorf("a detached attach exited %d, want 0", code)
		}
	}
	taker.pty.Write([]byte("still-here\r"))
	taker.waitOutput("still-here")
	if v := e.Session("d"); v.State != "running" {
		t.Fatalf("session %s", v.State)
	}
	taker.pty.Write([]byte{0x1c})
	taker.exitCode()
}

// ls fits an 80-column terminal, as tmux ls and docker ps do, however long
// a name or command; --wide and a pipe get every column whole.
func TestLsFitsTheTerminal(t *testing.T) {
	t.Parallel()
	e := e2e.NewEnv(t)
	e.StartServer()
	long := "a-rather-long-session-name-for-a-build"
	e.MustTk("new", "--name", long, "--", "sh", "-c", "sleep 600; echo "+strings.Repeat("with-many-arguments ", 6))
	e.MustTk("new", "--name", "short", "--", "cat")
	run := func(args ...string) string {
		cmd := exec.Command(e2e.TkBin, append([]string{"--state-dir", e.Dir}, args...)...)
		p, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		var out bytes.Buffer
		done := make(chan struct{})
		go func() { out.ReadFrom(p); close(done) }()
		cmd.Wait()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		return strings.ReplaceAll(out.String(), "\r", "")
	}
	out := run("ls")
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("a row of %d columns in an 80-column terminal:\n%s", n, out)
		}
	}
	if !strings.Contains(out, "short") || !strings.Contains(out, "…") {
		t.Errorf("ls in 80 columns:\n%s", out)
	}
	if wide := run("ls", "--wide"); !strings.Contains(wide, long) || !strings.Contains(wide, "with-many-arguments with-many-arguments") {
		t.Errorf("ls --wide cut a column:\n%s", wide)
	}
	if piped := e.MustTk("ls"); !strings.Contains(piped, long) {
		t.Errorf("ls into a pipe cut a column:\n%s", piped)
	}
}
