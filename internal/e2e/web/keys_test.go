package web

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// firstLine is the top line of a session's screen.
func firstLine(e *e2e.Env, ref string) string {
	s := e.MustTk("capture", ref)
	first, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(first)
}

// less switches the keyboard to application mode (DECCKM): Down must
// arrive as ESC O B, from `send --key` and from the MCP tool alike.
func TestKeysFollowApplicationMode(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("less"); err != nil {
		t.Skip("less is not installed")
	}
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "pager", "--env", "LESS=", "--env", "LESSHISTFILE=-", "--", "sh", "-c", "seq 1 200 | less")
	e2e.WaitFor(t, 20*time.Second, "less to show the first page", func() bool { return firstLine(e, "pager") == "1" })
	if s := e.Session("pager"); s.State != "running" {
		t.Fatalf("less is %s", s.State)
	}
	for i := 0; i < 3; i++ {
		e.MustTk("send", "pager", "--key", "Down")
	}
	e2e.WaitFor(t, 10*time.Second, "three Downs to scroll less by three lines", func() bool { return firstLine(e, "pager") == "4" })

	m := e2e.StartMCP(t, e)
	m.Initialize()
	m.Tool("send_input", map[string]any{"session": "pager", "keys": []string{"Down", "Down"}})
	e2e.WaitFor(t, 10*time.Second, "the MCP tool's Downs to scroll less", func() bool { return firstLine(e, "pager") == "6" })
	// End and Home, in application mode too.
	e.MustTk("send", "pager", "--key", "End")
	e2e.WaitFor(t, 10*time.Second, "End to reach the last page", func() bool {
		return strings.Contains(e.MustTk("capture", "pager"), "200")
	})
}

// vim (a curses-style full-screen program with keypad mode) moves its
// cursor with the keys send presses.
func TestKeysMoveVim(t *testing.T) {
	t.Parallel()
	vim := e2e.Vim(t)
	e := e2e.NewEnv(t)
	e.StartServer()
	dir := t.TempDir()
	e.MustTk("new", "--name", "ed", "--cwd", dir, "--", "sh", "-c", "seq 1 50 > f.txt; exec "+vim+" -u NONE -N -i NONE f.txt")
	e2e.WaitFor(t, 20*time.Second, "vim to show the file", func() bool { return firstLine(e, "ed") == "1" })
	for i := 0; i < 3; i++ {
		e.MustTk("send", "ed", "--key", "Down")
	}
	// Delete the line the cursor is on: line 4 if the Downs moved it.
	e.MustTk("send", "ed", "-l", "dd") // keys, not a paste: vim takes bracketed pastes
	e2e.WaitFor(t, 10*time.Second, "dd on line 4", func() bool {
		s := e.MustTk("capture", "ed")
		return strings.Contains(s, "\n3\n5\n")
	})
}
