package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// tmuxPane is a pane of a tmux server of the test's own: the outer
// terminal attach draws on, whose modes tmux reports.
type tmuxPane struct {
	t    *testing.T
	sock string
}

func newTmuxPane(t *testing.T, env ...string) *tmuxPane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed: `make test` installs it (apt-get install tmux)")
	}
	p := &tmuxPane{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	args := []string{"-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24"}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	p.run(append(args, "sh")...)
	t.Cleanup(func() { exec.Command("tmux", "-S", p.sock, "kill-server").Run() })
	return p
}

func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// modes is what tmux says of the pane's terminal: alternate screen,
// application cursor keys, mouse reporting (any, SGR) and cursor visible.
func (p *tmuxPane) modes() string {
	return strings.TrimSpace(p.run("display-message", "-p", "alt=#{alternate_on} ckm=#{keypad_cursor_flag} mouse=#{mouse_any_flag} sgr=#{mouse_sgr_flag} cursor=#{cursor_flag}"))
}

func (p *tmuxPane) screen(history bool) string {
	args := []string{"capture-pane", "-p"}
	if history {
		args = append(args, "-S", "-200")
	}
	return p.run(args...)
}

func (p *tmuxPane) waitScreen(what string, ok func(string) bool) {
	p.t.Helper()
	e2e.WaitFor(p.t, 20*time.Second, what, func() bool { return ok(p.screen(false)) })
}

// Detaching from a full-screen program, or the session ending, returns the
// outer terminal to the modes it had before the attach, whatever the
// program switched on; the screen from before the attach is in the
// scrollback (or, with --alt-screen, back on the screen).
func TestDetachRestoresTheTerminal(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	vim := ""
	for _, name := range []string{"vim", "vim.tiny", "vi"} {
		if p, err := exec.LookPath(name); err == nil {
			vim = p
			break
		}
	}
	modes := `printf '\033[?1049h\033[?1h\033=\033[?1000h\033[?1006h\033[?2004h\033[?25l\033[5 qFULL-SCREEN'; exec sleep 600`
	cases := []struct {
		name, program string
		flags         []string
		ready         string
		end           string // how the attach ends: "detach" or "exit"
	}{
		{"modes", modes, nil, "FULL-SCREEN", "detach"},
		{"modes alt-screen", modes, []string{"--alt-screen"}, "FULL-SCREEN", "detach"},
		{"modes then exit", `printf '\033[?1049h\033[?1h\033[?1000h\033[?25lFULL-SCREEN'; sleep 2`, nil, "FULL-SCREEN", "exit"},
	}
	if vim != "" {
		cases = append(cases, struct {
			name, program string
			flags         []string
			ready         string
			end           string
		}{"vim", fmt.Sprintf("exec %s -u NONE -N -c 'set mouse=a' -c 'set t_ve=' /dev/null", vim), nil, "~", "detach"})
	} else {
		t.Log("vim is not installed: its case is left out (`make test` installs vim-tiny)")
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("full%d", i)
			e.MustTk("new", "--name", name, "--", "sh", "-c", c.program)
			p := newTmuxPane(t, "PS1=$ ")
			p.run("send-keys", "printf 'before-attach-%d\\n'", "Enter")
			// The shell prints 0 for %d: the typed line does not match.
			p.waitScreen("the shell's line", func(s string) bool { return strings.Contains(s, "before-attach-0") })
			before := p.modes()
			cmd := strings.Join(append([]string{e2e.TkBin, "--state-dir", e.Dir, "attach"}, append(c.flags, name)...), " ")
			p.run("send-keys", cmd, "Enter")
			p.waitScreen("the program's screen", func(s string) bool { return strings.Contains(s, c.ready) && !strings.Contains(s, "attach") })
			during := p.modes()
			if during == before {
				t.Fatalf("the program changed no mode (%s): the test shows nothing", during)
			}
			if c.end == "detach" {
				p.run("send-keys", "C-\\")
			}
			p.waitScreen("attach to end", func(s string) bool {
				return strings.Contains(s, "[termkeep: detached from") || strings.Contains(s, "[termkeep: session ")
			})
			e2e.WaitFor(t, 10*time.Second, "the modes from before the attach", func() bool { return p.modes() == before })
			screen := p.screen(false)
			if strings.Contains(screen, c.ready) && c.ready != "~" {
				t.Errorf("the program's screen is left on the terminal:\n%s", screen)
			}
			if strings.Contains(strings.Join(c.flags, " "), "--alt-screen") {
				if !strings.Contains(screen, "before-attach-0") {
					t.Errorf("--alt-screen: the screen from before the attach is not back:\n%s", screen)
				}
			} else if !strings.Contains(p.screen(true), "before-attach-0") {
				t.Errorf("the screen from before the attach is lost, not in the scrollback:\n%s", p.screen(true))
			}
			t.Logf("before %s; during %s; after %s", before, during, p.modes())
		})
	}
}

// Under --alt-screen, a program leaving its alternate screen brings the
// session's normal screen back in attach's (which the terminal keeps), not
// the terminal's own screen from before the attach.
func TestAltScreenProgramLeavesItsScreen(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "a", "--", "sh", "-c", `printf 'NORMAL-LINE\r\n'; sleep 1; printf '\033[?1049hFULL-SCREEN'; sleep 2; printf '\033[?1049lBACK'; exec sleep 600`)
	p := newTmuxPane(t, "PS1=$ ")
	p.run("send-keys", "printf 'before-attach-%d\\n'", "Enter")
	p.waitScreen("the shell's line", func(s string) bool { return strings.Contains(s, "before-attach-0") })
	p.run("send-keys", e2e.TkBin+" --state-dir "+e.Dir+" attach --alt-screen a", "Enter")
	p.waitScreen("the program's full screen", func(s string) bool { return strings.Contains(s, "FULL-SCREEN") })
	p.waitScreen("the session's normal screen again", func(s string) bool {
		return strings.Contains(s, "NORMAL-LINE") && strings.Contains(s, "BACK") && !strings.Contains(s, "FULL-SCREEN")
	})
	if s := p.screen(false); strings.Contains(s, "before-attach-0") || p.modes()[:5] != "alt=1" {
		t.Fatalf("the program's exit from its screen took attach out of the alternate screen (%s):\n%s", p.modes(), s)
	}
	p.run("send-keys", "C-\\")
	p.waitScreen("the screen from before the attach", func(s string) bool { return strings.Contains(s, "before-attach-0") })
}

// attach without a terminal is a usage error: it would write escape codes
// into a pipe and wait for keys that never come.
func TestAttachNeedsATerminal(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "n", "--", "cat")
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	out, errs, code := e.TkIn(devnull, "attach", "n")
	if code != 2 || !strings.Contains(errs, "attach needs a terminal") || strings.Contains(out, "\x1b") {
		t.Fatalf("attach </dev/null: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// A session's clipboard write (OSC 52) reaches the terminal of a
// read-write attach, whose own terminal applies its policy, and never a
// read-only attach's: a watcher's clipboard is not the session's to set.
func TestReadOnlyAttachGetsNoClipboardWrite(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	e.TkEnv([]string{"PS1=$ "}, "", "new", "--name", "clip", "--", "sh")
	rw := startAttach(t, e, "clip", false)
	ro := startAttach(t, e, "clip", false, "--read-only")
	rw.waitOutput("$ ")
	ro.waitOutput("$ ")
	rw.pty.Write([]byte("printf '\\033]52;c;%s\\007done-%s\\n' aGVsbG8= $((1+1))\r"))
	rw.waitOutput("done-2")
	ro.waitOutput("done-2")
	if !bytes.Contains(rw.bytes(), []byte("\x1b]52;c;aGVsbG8=\x07")) {
		t.Fatalf("the read-write attach's terminal did not get the clipboard write: %q", e2e.Tail(rw.bytes(), 200))
	}
	if bytes.Contains(ro.bytes(), []byte("\x1b]52;")) {
		t.Fatalf("the read-only attach's terminal got a clipboard write: %q", e2e.Tail(ro.bytes(), 200))
	}
}
