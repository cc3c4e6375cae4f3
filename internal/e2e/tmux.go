package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Tmux is one tmux window on a private server, its pane running a
// command: a real terminal emulator with a scrollback, what a user reads.
type Tmux struct {
	t    *testing.T
	sock string
}

// StartTmux starts a private tmux server whose one pane, of cols x rows
// with a history of history lines, runs command with sh. The server is
// killed when the test ends, before the env's cleanup (registered
// earlier): an attach left in it would start a server again. Without
// tmux the test is skipped.
func StartTmux(t *testing.T, cols, rows, history int, command string) *Tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	// A socket path has room for about 108 bytes: not under t.TempDir.
	dir, err := os.MkdirTemp("", "tm")
	if err != nil {
		t.Fatal(err)
	}
	p := &Tmux{t: t, sock: filepath.Join(dir, "s")}
	conf := filepath.Join(dir, "tmux.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("set -g history-limit %d\nset -g remain-on-exit on\nset -g status off\n", history)), 0o600)
	t.Cleanup(func() {
		exec.Command("tmux", "-S", p.sock, "kill-server").Run()
		os.RemoveAll(dir)
	})
	cmd := exec.Command("tmux", "-S", p.sock, "-f", conf, "new-session", "-d", "-s", "t",
		"-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), command)
	// The pane is a terminal of its own, not one inside a session or
	// another tmux.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX") && !strings.HasPrefix(kv, "TERMKEEP_SESSION=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	return p
}

// Capture is the pane's text: its whole history and its screen (all), or
// its screen only; a row a line, trailing blanks trimmed.
func (p *Tmux) Capture(all bool) []string {
	p.t.Helper()
	args := []string{"-S", p.sock, "capture-pane", "-p", "-t", "t"}
	if all {
		args = append(args, "-S", "-", "-E", "-")
	}
	out, err := exec.Command("tmux", args...).Output()
	if err != nil {
		p.t.Fatalf("tmux capture-pane: %v", err)
	}
	rows := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i, r := range rows {
		rows[i] = strings.TrimRight(r, " ")
	}
	return rows
}

// CaptureStyled is the pane's screen with its colours and attributes, as
// capture-pane -e writes them (SGR sequences before the cells they style).
func (p *Tmux) CaptureStyled() string {
	p.t.Helper()
	out, err := exec.Command("tmux", "-S", p.sock, "capture-pane", "-p", "-e", "-t", "t").Output()
	if err != nil {
		p.t.Fatalf("tmux capture-pane: %v", err)
	}
	return string(out)
}

// WaitShows waits until the pane's screen has a row holding s.
func (p *Tmux) WaitShows(s string, d time.Duration) {
	p.t.Helper()
	var rows []string
	deadline := time.Now().Add(d)
	for {
		rows = p.Capture(false)
		for _, r := range rows {
			if strings.Contains(r, s) {
				return
			}
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the pane never showed %q; its screen:\n%s", s, strings.Join(rows, "\n"))
		}
		time.Sleep(50 * time.Millisecond) // tmux tells nobody when a pane changes
	}
}

// SendKeys types keys in the pane, as tmux's send-keys takes them (key
// names such as Enter and C-\\ included).
func (p *Tmux) SendKeys(keys ...string) {
	p.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"-S", p.sock, "send-keys", "-t", "t"}, keys...)...).CombinedOutput(); err != nil {
		p.t.Fatalf("tmux send-keys: %v: %s", err, out)
	}
}

// Resize makes the pane cols x rows, as a user resizing the window.
func (p *Tmux) Resize(cols, rows int) {
	p.t.Helper()
	if out, err := exec.Command("tmux", "-S", p.sock, "resize-window", "-t", "t", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows)).CombinedOutput(); err != nil {
		p.t.Fatalf("tmux resize-window: %v: %s", err, out)
	}
}
