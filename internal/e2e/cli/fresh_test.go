package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"termkeep/internal/e2e"
)

// A fresh attach to a session with a long history draws the session's
// screen before its history: the screen is what the user waits for. The
// history follows, into the terminal's scrollback, each line once (the
// screen drawn first does not end up there too), and the output after the
// attach arrives exactly once.
func TestFreshAttachDrawsTheScreenFirst(t *testing.T) {
	t.Parallel()
	e := e2e.NewEnv(t)
	e.StartServer()
	const lines = 3000
	e.MustTk("new", "--name", "long", "--size", "80x24", "--", "sh", "-c",
		fmt.Sprintf(`seq -f hist-%%g %d; echo ready; read x; for k in 1 2 3; do echo after-$k; done; exec sleep 600`, lines))
	e2e.WaitFor(t, 20*time.Second, "the session's history", func() bool {
		out, _, _ := e.Tk("capture", "long")
		return strings.Contains(out, "ready")
	})

	p := newTmuxPane(t, "PS1=$ ")
	raw := filepath.Join(t.TempDir(), "pane.raw")
	p.run("pipe-pane", "cat >> "+raw)
	p.run("send-keys", e2e.TkBin+" --state-dir "+e.Dir+" attach --scrollback 1000 long", "Enter")
	p.waitScreen("the session's screen", func(s string) bool {
		return strings.Contains(s, "ready") && strings.Contains(s, fmt.Sprintf("hist-%d", lines))
	})
	// The history goes above the screen: the 1000 lines above the screen's.
	oldest := lines - 22 - 1000 + 1 // the screen shows the last 22 lines, ready and the cursor's
	e2e.WaitFor(t, 20*time.Second, "the history in the terminal's scrollback", func() bool {
		return strings.Contains(p.screen(true)+p.run("capture-pane", "-p", "-S", "-3000"), fmt.Sprintf("hist-%d\n", oldest))
	})

	// The pane's copy of what the terminal got reaches the file through
	// a process of tmux's own, a little after the screen shows it.
	var b []byte
	screenAt, historyAt := -1, -1
	e2e.WaitFor(t, 20*time.Second, "the terminal's bytes in the pane's copy", func() bool {
		var err error
		if b, err = os.ReadFile(raw); err != nil {
			t.Fatal(err)
		}
		screenAt = bytes.Index(b, []byte("ready"))
		historyAt = bytes.Index(b, fmt.Appendf(nil, "hist-%d\r", oldest+10))
		return screenAt >= 0 && historyAt >= 0
	})
	if historyAt < screenAt {
		t.Errorf("the history was drawn before the screen (byte %d, the screen's last line at byte %d)", historyAt, screenAt)
	}

	once := func(what string, from, to int, prefix string) {
		t.Helper()
		all := strings.Split(p.run("capture-pane", "-p", "-S", "-3000"), "\n")
		count := map[string]int{}
		for _, l := range all {
			count[strings.TrimRight(l, " ")]++
		}
		for k := from; k <= to; k++ {
			if n := count[fmt.Sprintf("%s%d", prefix, k)]; n != 1 {
				t.Errorf("%s: %s%d is in the terminal %d times, want once", what, prefix, k, n)
				return
			}
		}
	}
	once("the history and screen", oldest, lines, "hist-")
	if t.Failed() {
		t.Logf("the terminal:\n%s", p.run("capture-pane", "-p", "-S", "-3000"))
		return
	}

	p.run("send-keys", "go", "Enter")
	p.waitScreen("the output after the attach", func(s string) bool { return strings.Contains(s, "after-3") })
	once("after the attach", 1, 3, "after-")
	once("the history and screen, after more output", oldest, lines, "hist-")
}

// attach asks no server whether it answers before it attaches (a round
// trip before the first draw): with no server running it starts one and
// attaches, or, with --no-autostart, says that none runs and exits 1,
// leaving the terminal as it was.
func TestAttachWithNoServer(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "s", "--", "sh", "-c", "echo shown-$((40+2)); exec sleep 600")
	e2e.WaitFor(t, 20*time.Second, "the session's output", func() bool {
		out, _, _ := e.Tk("capture", "s")
		return strings.Contains(out, "shown-42")
	})
	e.ShutdownServer()

	cmd := exec.Command(e2e.TkBin, "--state-dir", e.Dir, "--no-autostart", "attach", "s")
	p, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 90, Rows: 30})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(p) // until attach exits (EIO)
	p.Close()
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("--no-autostart with no server: %v, want exit status 1", err)
	}
	if !strings.Contains(string(out), "no termkeep server is running") {
		t.Errorf("--no-autostart with no server says %q", out)
	}

	a := startAttach(t, e, "s", true)
	a.waitOutput("shown-42")
	a.pty.Write([]byte{0x1c})
	if code := a.exitCode(); code != 0 {
		t.Fatalf("detach: exit %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.C.Shutdown(ctx, true); err != nil {
		t.Fatalf("no server after attach started one: %v", err)
	}
	e2e.WaitFor(t, 20*time.Second, "the server to stop", func() bool {
		_, err := e.C.Health(context.Background())
		return err != nil
	})
}
