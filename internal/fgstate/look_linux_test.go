package fgstate

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// term is a program on a real pty, its output collected.
type term struct {
	t    *testing.T
	ptmx *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
}

func start(t *testing.T, dir string, argv ...string) *term {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "HOME="+dir, "NODE_REPL_HISTORY=", "PYTHONSTARTUP=")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, ptmx: ptmx, cmd: cmd}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			tm.mu.Lock()
			tm.out.Write(b[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
		cmd.Wait()
		ptmx.Close()
		<-done
	})
	return tm
}

func (tm *term) printed(s string) bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return strings.Contains(tm.out.String(), s)
}

func (tm *term) look() Facts { return Look(int(tm.ptmx.Fd()), tm.cmd.Process.Pid) }

// TestLook runs real programs on a real pty and asks the kernel what
// each is doing once it has printed what it prints before it waits: the
// quiet builds whose last lines fooled the screen's heuristics are
// running; the programs waiting for a line read the terminal; full-screen
// programs and REPLs wait on events.
func TestLook(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "victim.txt"), []byte("x\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "page.txt"), bytes.Repeat([]byte("a line of the file\n"), 100), 0o600)
	sh := func(script string) []string { return []string{"/bin/sh", "-c", script} }
	for _, tc := range []struct {
		name    string
		argv    []string
		need    string // a program the row needs
		printed string // waited for before asking
		want    State
		comm    string // the deciding process, when the row says
	}{
		{"a quiet test run", sh(`printf 'Running 120 tests:'; sleep 30`), "", "tests:", Running, ""},
		{"a quiet download", sh(`printf 'Downloading deps 45%%'; sleep 30`), "", "45%", Running, ""},
		{"a quiet line of prompts", sh(`printf '> … >'; sleep 30`), "", ">", Running, ""},
		{"a question answered from a pipe", sh(`printf 'Continue? [y/N] '; sleep 30 | cat`), "", "[y/N]", Running, ""},
		{"a question with no punctuation", []string{"bash", "--norc", "-c", `printf 'Enter your name '; read x`}, "bash", "name", ReadingTerminal, "bash"},
		{"read -s", []string{"bash", "--norc", "-c", `printf 'Password'; read -s x`}, "bash", "Password", ReadingTerminal, "bash"},
		{"rm -i", []string{"rm", "-i", "victim.txt"}, "rm", "victim.txt", ReadingTerminal, "rm"},
		{"cat", []string{"cat"}, "cat", "", ReadingTerminal, "cat"},
		{"sleep", []string{"sleep", "30"}, "sleep", "", Running, "sleep"},
		{"less", []string{"less", "page.txt"}, "less", "a line of the file", ReadingTerminal, "less"},
		{"vim", []string{"vim", "-u", "NONE", "-N", "-i", "NONE", "page.txt"}, "vim", "a line of the file", WaitingOnEvents, "vim"},
		{"node's REPL", []string{"node", "-i"}, "node", ">", WaitingOnEvents, "node"},
		{"a shell waiting beside a job running in its own group", []string{"python3", "-c", `import os, select, sys, time
if os.fork() == 0:
    while True: pass
sys.stdout.write("ready"); sys.stdout.flush()
select.select([sys.stdin], [], [])`}, "python3", "ready", WaitingOnEvents, "python3"},
		{"python3's REPL", []string{"python3", "-i", "-q"}, "python3", ">>>", WaitingOnEvents, "python3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			argv := tc.argv
			if tc.need != "" {
				p, err := exec.LookPath(tc.need)
				if err != nil && tc.need == "vim" {
					p, err = exec.LookPath("vim.tiny")
				}
				if err != nil {
					t.Skipf("no %s here", tc.need)
				}
				if argv[0] == tc.need {
					argv = append([]string{p}, argv[1:]...)
				}
			}
			t.Parallel()
			tm := start(t, dir, argv...)
			deadline := time.Now().Add(10 * time.Second)
			for !tm.printed(tc.printed) {
				if time.Now().After(deadline) {
					t.Fatalf("it never printed %q", tc.printed)
				}
				time.Sleep(20 * time.Millisecond)
			}
			// A program that waits is asked until it is seen waiting; one
			// at work must never be seen waiting in the meantime.
			var f Facts
			for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
				f = tm.look()
				if tc.want == Running && f.State != Running {
					break
				}
				if tc.want != Running && f.State == tc.want {
					break
				}
				if tc.want == Running && time.Until(end) < 4*time.Second {
					break // a second of running is enough
				}
			}
			if f.State != tc.want || tc.comm != "" && f.Comm != tc.comm {
				t.Errorf("%s: %+v, want %s by %q", tc.name, f, tc.want, tc.comm)
			}
			if !f.Shell || f.Pgrp != tm.cmd.Process.Pid || f.Unread != 0 {
				t.Errorf("%+v: want the session's own group (%d), nothing unread", f, tm.cmd.Process.Pid)
			}
		})
	}
}

// TestLookShellJob: a shell's job leads the terminal's foreground, not
// the shell; what is typed meanwhile waits unread; at its prompt again
// the shell is the foreground itself.
func TestLookShellJob(t *testing.T) {
	dir := t.TempDir()
	tm := start(t, dir, "bash", "--norc", "--noprofile", "-i")
	// Quoted in two, so that the tty's echo of the line, before bash
	// reads it, is not taken for the prompt.
	tm.ptmx.WriteString("PS1='rea''dy> '\n")
	wait := func(what string, ok func(Facts) bool) Facts {
		t.Helper()
		var f Facts
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if f = tm.look(); ok(f) {
				return f
			}
		}
		t.Fatalf("%s never came: %+v", what, f)
		return f
	}
	// The prompt first, then the kernel: a look taken before the prompt
	// was printed may have seen the line still unread.
	wait("the prompt", func(Facts) bool { return tm.printed("ready> ") })
	f := wait("the shell at its prompt", func(f Facts) bool { return f.Shell && f.State != Running })
	if f.Unread != 0 || f.Comm != "bash" {
		t.Errorf("at the prompt: %+v; printed %q", f, tm.out.String())
	}
	tm.ptmx.WriteString("sleep 30\n")
	f = wait("sleep in the foreground", func(f Facts) bool { return !f.Shell && f.LeaderComm == "sleep" })
	if f.State != Running || f.Pgrp == tm.cmd.Process.Pid {
		t.Errorf("a job: %+v", f)
	}
	tm.ptmx.WriteString("typed ahead\n")
	f = wait("the typing to wait unread", func(f Facts) bool { return f.Unread > 0 })
	if f.Unread != len("typed ahead\n") || f.Shell {
		t.Errorf("typed ahead: %+v", f)
	}
}
