package shellinit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// wait is how long a test waits for a shell's output: generous, since a
// loaded machine running -race can be slow; nothing asserts timing.
const wait = 30 * time.Second

const (
	markB = "\x1b]133;B\a"
	markD = "\x1b]133;D;"
)

// term is a shell running in a real pty, its output collected as it comes.
type term struct {
	t      *testing.T
	pty    *os.File
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd.Wait has returned
	read   chan struct{} // closed once the pty's reader has stopped

	mu  sync.Mutex
	out []byte // mu guards out: all output so far
	pos int    // how much of out expect has consumed; test goroutine only
}

// startTerm starts argv with exactly env in dir, in a pty. The process is
// killed, if still running, when the test ends.
func startTerm(t *testing.T, argv, env []string, dir string) *term {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	tm := &term{t: t, pty: f, cmd: cmd, exited: make(chan struct{})}
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.out = append(tm.out, buf[:n]...)
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		cmd.Wait()
		close(tm.exited)
	}()
	tm.read = read
	t.Cleanup(func() {
		if err := tm.close(); err != nil {
			t.Error(err)
		}
	})
	return tm
}

// close ends the shell and everything it started, and waits for the pty's
// reader to stop. The master is in blocking mode (pty.Start sets its size
// through Fd), so closing it does not wake the reader: only the end of the
// last process holding the pty's slave does. That may be a job in its own
// process group, or a command fish was starting when the test ended, and
// under load it can take a while: the session is killed again every
// tenth of a second until the reader stops, within a deadline no machine
// should reach.
func (tm *term) close() error {
	sid := tm.cmd.Process.Pid // pty.Start makes the shell a session leader
	killSession(sid)
	<-tm.exited
	tm.pty.Close()
	const patience = 2 * time.Minute
	deadline := time.After(patience)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tm.read:
			return nil
		case <-tick.C:
			killSession(sid)
		case <-deadline:
			return fmt.Errorf("the pty reader did not stop in %v: a process of session %d still holds the pty", patience, sid)
		}
	}
}

// killSession SIGKILLs every process in session sid. The number cannot
// name another process's session meanwhile: the kernel does not reuse a
// pid while any process has it as its session.
func killSession(sid int) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone already
		}
		// After the command name, which is in parentheses and may hold
		// anything: state, ppid, pgrp, session.
		i := bytes.LastIndexByte(b, ')')
		if f := strings.Fields(string(b[i+1:])); len(f) > 3 && f[3] == strconv.Itoa(sid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// output returns a copy of everything the shell wrote so far.
func (tm *term) output() []byte {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return bytes.Clone(tm.out)
}

func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := tm.pty.WriteString(s); err != nil {
		tm.t.Fatalf("write %q: %v", s, err)
	}
}

// expect waits for s in the output not yet consumed and consumes it; it
// returns the output from where it started to the end of s.
func (tm *term) expect(s string) []byte {
	tm.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		tm.mu.Lock()
		rest := tm.out[tm.pos:]
		i := bytes.Index(rest, []byte(s))
		var got []byte
		if i >= 0 {
			got = bytes.Clone(rest[:i+len(s)])
			tm.pos += i + len(s)
		}
		tm.mu.Unlock()
		if got != nil {
			return got
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("no %q from the shell in %v; its output since the last match:\n%q", s, wait, rest)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// run types line and Enter and waits for the command to finish (133;D)
// and the next prompt to be drawn (133;B); it returns the output between.
func (tm *term) run(line string) []byte {
	tm.t.Helper()
	tm.send(line + "\r")
	out := tm.expect(markD)
	return append(out, tm.expect(markB)...)
}

// exit ends the shell with an end of file at its prompt and waits for it.
func (tm *term) exit() {
	tm.t.Helper()
	tm.send("\x04")
	select {
	case <-tm.exited:
	case <-time.After(wait):
		tm.t.Fatalf("the shell did not exit on ^D in %v; its output:\n%q", wait, tm.output()[tm.pos:])
	}
}

// A job the shell ran in the background, in its own process group, keeps
// the pty open after the shell is killed: ending the terminal ends it too,
// so the pty's reader stops at once rather than when the job ends.
func TestTermCloseEndsTheShellsJobs(t *testing.T) {
	sh, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	tm := startTerm(t, []string{sh, "--norc", "--noprofile", "-i"}, []string{"PS1=$ ", "PATH=/usr/bin:/bin"}, t.TempDir())
	tm.send("set -m; sleep 600 & echo started-$((6*7))\r")
	tm.expect("started-42")
	start := time.Now()
	if err := tm.close(); err != nil {
		t.Fatal(err)
	}
	// Well within the ten minutes of the job, whatever the machine's load.
	if d := time.Since(start); d > 2*time.Minute {
		t.Fatalf("closing the terminal took %v", d)
	}
}
