package shellinit

import (
	"bytes"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// wait is how long a test waits for a shell's output: generous, since a
// loaded machine running -race can be slow; nothing asserts timing.
const wait = 10 * time.Second

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
	t.Cleanup(func() {
		select {
		case <-tm.exited:
		default:
			cmd.Process.Kill()
			<-tm.exited
		}
		f.Close()
		select {
		case <-read:
		case <-time.After(wait):
			t.Errorf("the pty reader did not stop in %v", wait)
		}
	})
	return tm
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
