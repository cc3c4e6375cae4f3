package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
	"termkeep/internal/screen"
)

// Errors a user meets: one clear line on stderr and the documented exit code.
func TestCLIErrorsAndExitCodes(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	// No server and --no-autostart: a clear error.
	if _, errs, code := e.Tk("ls"); code != 1 || !strings.Contains(errs, "no termkeep server is running") {
		t.Fatalf("ls with no server: exit %d %q", code, errs)
	}
	e.StartServer()
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"attach", "nosuch"}, 1, `no session "nosuch"`},
		{[]string{"send", "nosuch", "x"}, 1, `no session "nosuch"`},
		{[]string{"kill", "nosuch"}, 1, `no session "nosuch"`},
		{[]string{"capture", "--raw", "nosuch"}, 1, `no session "nosuch"`},
		{[]string{"wait", "nosuch", "--exit"}, 1, `no session "nosuch"`},
		{[]string{"ls", "--bogus"}, 2, "unknown flag"},
		{[]string{"new", "--size", "80by24"}, 2, "COLSxROWS"},
		{[]string{"new", "--env", "NOEQUALS"}, 2, "KEY=VALUE"},
		{[]string{"new", "--name", "bad name!"}, 2, "not allowed"},
		{[]string{"new", "--name", "", "--", "cat"}, 2, "--name is empty"},
		{[]string{"attach", ""}, 2, "SESSION is empty"},
		{[]string{"send", "", "x"}, 2, "SESSION is empty"},
		{[]string{"kill", ""}, 2, "SESSION is empty"},
		{[]string{"restore", ""}, 2, "SESSION is empty"},
		{[]string{"rm", ""}, 2, "SESSION is empty"},
		{[]string{"capture", ""}, 2, "SESSION is empty"},
		{[]string{"wait", " ", "--exit"}, 2, "SESSION is empty"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"serve", "--listen", "127.0.0.1:99999"}, 2, "port 99999 is out of range"},
		{[]string{"serve", "--listen", "garbage"}, 2, "not HOST:PORT"},
		{[]string{"new", "--cwd", "/does/not/exist"}, 1, "does not exist"},
		{[]string{"new", "--", "/no/such/program"}, 1, "/no/such/program"},
		{[]string{"wait", "x"}, 2, "exactly one of"},
		{[]string{"attach"}, 2, "needs"},
		{[]string{"send", "x", "--key", "C-Nope"}, 2, "unknown key"},
		{[]string{"send", "x", "--paste", "--no-paste", "y"}, 2, "--paste and --no-paste"},
		{[]string{"events", "--type", "sesion"}, 2, "session.created"},
		{[]string{"capture", "--raw", "--ansi", "x"}, 2, "--raw prints bytes"},
		{[]string{"capture", "--from", "3", "x"}, 2, "--from needs --raw"},
	}
	for _, c := range cases {
		_, errs, code := e.Tk(c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("termkeep %v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, errs, c.code, c.msg)
		}
		if n := strings.Count(strings.TrimSpace(errs), "\n"); code != 0 && n > 0 {
			t.Errorf("termkeep %v: %d lines on stderr, want one: %q", c.args, n+1, errs)
		}
	}
	// Names are unique among sessions, and no name is shaped like a
	// session id (another's, or one a later session may get), from the CLI
	// or the API.
	e.MustTk("new", "--name", "dup", "--", "cat")
	for _, name := range []string{e.Session("dup").ID, "abcd2345"} {
		if _, errs, code := e.Tk("new", "--name", name, "--", "cat"); code != 2 || !strings.Contains(errs, "shaped like a session id") {
			t.Errorf("new --name %s, shaped like an id: exit %d %q", name, code, errs)
		}
		if _, err := e.C.Create(context.Background(), api.CreateRequest{Name: name, Command: []string{"cat"}, Cwd: "/"}); err == nil || !strings.Contains(err.Error(), "shaped like a session id") {
			t.Errorf("the API took the name %s, shaped like an id: %v", name, err)
		}
	}
	// A --listen port another program holds is an error, not a server
	// without its browser listener.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if _, errs, code := e.Tk("serve", "--state-dir", t.TempDir(), "--listen", busy.Addr().String()); code != 2 || !strings.Contains(errs, "in use") {
		t.Errorf("serve on a port in use: exit %d %q", code, errs)
	}
	if _, errs, code := e.Tk("new", "--name", "dup", "--", "cat"); code != 1 || !strings.Contains(errs, "already exists") {
		t.Errorf("duplicate name: exit %d %q", code, errs)
	}
	// A wait that times out exits 124.
	start := time.Now()
	if _, _, code := e.Tk("wait", "dup", "--from", "start", "--output", "never printed", "--timeout", "500ms"); code != 124 {
		t.Errorf("wait timeout: exit %d, want 124", code)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("wait --timeout 500ms took %s", time.Since(start))
	}
	// rm refuses a running session without --force.
	if _, errs, code := e.Tk("rm", "dup"); code != 1 || !strings.Contains(errs, "--force") {
		t.Errorf("rm running: exit %d %q", code, errs)
	}
	e.MustTk("rm", "--force", "dup")
	if len(e.Ls()) != 0 {
		t.Error("rm --force left the session")
	}
	// ls --json of nothing is [].
	if out := strings.TrimSpace(e.MustTk("ls", "--json")); out != "[]" {
		t.Errorf("ls --json with no sessions = %q", out)
	}
}

// new passes the caller's environment and directory, --env, TERM and the
// size; send types text, keys and stdin; wait finds text already printed.
func TestNewSendWait(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	dir := t.TempDir()
	os.Mkdir(dir+"/sub", 0o755)
	cmd := exec.Command(e2e.TkBin, "--state-dir", e.Dir, "--no-autostart", "new", "--name", "sh", "--cwd", "sub",
		"--size", "120x40", "--env", "FOO=bar baz", "--", "sh")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FROM_CALLER=yes", "TERM=dumb")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("new: %v %s", err, out)
	}
	e.MustTk("send", "sh", `echo "[$FOO|$FROM_CALLER|$TERM|$(pwd)|$(stty size)]"`)
	want := "[bar baz|yes|xterm-256color|" + dir + "/sub|40 120]"
	if _, errs, code := e.Tk("wait", "sh", "--from", "start", "--output", want, "--timeout", "20s"); code != 0 {
		out, _, _ := e.Tk("capture", "--raw", "sh")
		t.Fatalf("wait for %q: %d %s; output: %q", want, code, errs, out)
	}
	// --from start sees output already printed; --from now does not.
	if _, _, code := e.Tk("wait", "sh", "--from", "start", "--output", want, "--timeout", "10s"); code != 0 {
		t.Fatal("wait --from start did not find output already printed")
	}
	if _, _, code := e.Tk("wait", "sh", "--output", want, "--from", "now", "--timeout", "300ms"); code != 124 {
		t.Fatal("wait --from now matched old output")
	}
	// Keys: C-c interrupts a sleeping foreground job; the shell prints again.
	e.MustTk("send", "sh", "sleep 100")
	time.Sleep(300 * time.Millisecond)
	e.MustTk("send", "sh", "--key", "C-c")
	e.MustTk("send", "sh", "echo after-$((4*5))")
	if _, errs, code := e.Tk("wait", "sh", "--from", "start", "--output", "after-20", "--timeout", "20s"); code != 0 {
		t.Fatalf("C-c did not interrupt: %d %s", code, errs)
	}
	// --stdin sends bytes as they are, with no Enter added.
	if _, errs, code := e.TkIn(strings.NewReader("echo from-stdin-$((6*7))\r"), "send", "--stdin", "sh"); code != 0 {
		t.Fatalf("send --stdin: %d %s", code, errs)
	}
	if _, errs, code := e.Tk("wait", "sh", "--from", "start", "--output", "from-stdin-42", "--timeout", "20s"); code != 0 {
		t.Fatalf("send --stdin: wait %d %s", code, errs)
	}
	// --exit carries the status, 128+N for a signal.
	e.MustTk("send", "sh", "exit 5")
	if _, _, code := e.Tk("wait", "sh", "--exit", "--timeout", "20s"); code != 5 {
		t.Fatalf("wait --exit = %d, want 5", code)
	}
	id := strings.TrimSpace(e.MustTk("new", "--", "sh", "-c", "kill -TERM $$"))
	if _, _, code := e.Tk("wait", id, "--exit", "--timeout", "20s"); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("wait --exit for a signalled child = %d, want %d", code, 128+int(syscall.SIGTERM))
	}
	// wait --output on a session that ends without the text exits 1.
	id = strings.TrimSpace(e.MustTk("new", "--", "true"))
	if _, _, code := e.Tk("wait", id, "--from", "start", "--output", "nope", "--timeout", "20s"); code != 1 {
		t.Fatalf("wait --output on an ended session = %d, want 1", code)
	}
}

// attachPty runs `termkeep attach` in a real pty, as a person would.
// attachPty is attach in a real pty, whose output the test reads, and can
// stop reading (a terminal that stopped: Ctrl-S, a hung emulator).
type attachPty struct {
	t      *testing.T
	cmd    *exec.Cmd
	pty    *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	paused bool
	resume *sync.Cond
	done   chan struct{}
	// answers: the terminal answers each cursor-position question the
	// moment it shows, as a real one does (set before any is asked).
	answers  atomic.Bool
	answered int
}

func startAttach(t *testing.T, e *e2e.Env, ref string, autostart bool, flags ...string) *attachPty {
	t.Helper()
	args := []string{"--state-dir", e.Dir}
	if !autostart {
		args = append(args, "--no-autostart")
	}
	args = append(append(args, "attach"), flags...)
	if ref != "" {
		args = append(args, ref)
	}
	return runAttach(t, args, 90, 30)
}

// runAttach runs termkeep with args in a pty of cols x rows, and returns
// once attach owns the terminal (raw mode), as a person would type only
// after seeing the screen.
func runAttach(t *testing.T, args []string, cols, rows uint16) *attachPty {
	t.Helper()
	cmd := exec.Command(e2e.TkBin, args...)
	p, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: cols, Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	a := &attachPty{t: t, cmd: cmd, pty: p, done: make(chan struct{})}
	a.resume = sync.NewCond(&a.mu)
	go a.copyOut()
	t.Cleanup(func() { cmd.Process.Kill(); p.Close() })
	e2e.WaitFor(t, 20*time.Second, "attach to enter raw mode", func() bool { return !echoOn(t, p) })
	return a
}

// copyOut reads the terminal into out, but not while paused, until it
// ends.
func (a *attachPty) copyOut() {
	buf := make([]byte, 32<<10)
	for {
		a.mu.Lock()
		for a.paused {
			a.resume.Wait()
		}
		a.mu.Unlock()
		n, err := a.pty.Read(buf)
		a.mu.Lock()
		a.out.Write(buf[:n])
		asked := 0
		if a.answers.Load() {
			asked = bytes.Count(a.out.Bytes(), []byte("\x1b[6n")) - a.answered
			a.answered += asked
		}
		a.mu.Unlock()
		for range asked {
			a.pty.Write([]byte("\x1b[7;3R"))
		}
		if err != nil {
			close(a.done)
			return
		}
	}
}

// pause stops (on) or resumes reading attach's terminal.
func (a *attachPty) pause(on bool) {
	a.mu.Lock()
	a.paused = on
	a.mu.Unlock()
	a.resume.Broadcast()
}

// bytes is everything attach's terminal got so far.
func (a *attachPty) bytes() []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return bytes.Clone(a.out.Bytes())
}

func (a *attachPty) waitOutput(s string, or ...string) {
	a.t.Helper()
	e2e.WaitFor(a.t, 20*time.Second, "attach to show "+strings.Join(append([]string{s}, or...), " or "), func() bool {
		b := a.bytes()
		for _, x := range append([]string{s}, or...) {
			if bytes.Contains(b, []byte(x)) {
				return true
			}
		}
		return false
	})
}

// exitCode waits for attach to exit and returns its status, once the test
// has read all attach wrote: its last lines may still sit in the pty when
// the process is gone.
func (a *attachPty) exitCode() int {
	a.t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- a.cmd.Wait() }()
	var err error
	select {
	case err = <-errc:
	case <-time.After(20 * time.Second):
		a.t.Fatal("attach did not exit")
	}
	a.mu.Lock()
	paused := a.paused
	a.mu.Unlock()
	if !paused {
		select {
		case <-a.done:
		case <-time.After(10 * time.Second):
			a.t.Fatal("attach's terminal did not end after attach exited")
		}
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		a.t.Fatal(err)
	}
	return 0
}

// attach in a real terminal: output, typing, size, detach with Ctrl-\ (the
// terminal restored and the session still running), reattach, and the end.
func TestAttachInTerminal(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "a", "--", "sh")
	e.MustTk("send", "a", "echo before-attach")

	a := startAttach(t, e, "a", false)
	a.waitOutput("before-attach") // history from the oldest retained byte
	a.pty.Write([]byte("stty size; echo typed-$((1+1))\r"))
	a.waitOutput("typed-2")
	a.waitOutput("30 90") // the session follows the attached terminal's size
	pty.Setsize(a.pty, &pty.Winsize{Cols: 100, Rows: 35})
	time.Sleep(300 * time.Millisecond)
	a.pty.Write([]byte("stty size\r"))
	a.waitOutput("35 100")

	// Raw mode while attached; restored after detach.
	if echoOn(t, a.pty) {
		t.Fatal("the terminal is not in raw mode while attached")
	}
	a.pty.Write([]byte{0x1c}) // Ctrl-\ detaches
	if code := a.exitCode(); code != 0 {
		t.Fatalf("detach: exit %d", code)
	}
	a.waitOutput("detached")
	if !echoOn(t, a.pty) {
		t.Fatal("the terminal was not restored after detach")
	}
	if s := e.Session("a"); s.State != "running" {
		t.Fatalf("after detach the session is %s", s.State)
	}

	// Reattach; the session ends; attach says so and exits with its status.
	b := startAttach(t, e, "a", false)
	b.waitOutput("typed-2")
	b.pty.Write([]byte("exit 9\r"))
	if code := b.exitCode(); code != 9 {
		t.Fatalf("attach exit code %d, want 9", code)
	}
	b.waitOutput("exited with status 9")
}

// Keys typed while attach has no server for longer than keyHold (1 s) are
// not typed when it comes back: what they were typed into may be gone.
// attach says how many it dropped, and what is typed afterwards goes.
func TestAttachDropsKeysOfALongOutage(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "k", "--", "sh")
	a := startAttach(t, e, "k", false) // --no-autostart: the outage lasts
	a.pty.Write([]byte("echo one-$((10+1))\r"))
	a.waitOutput("one-11")
	e.KillServer()
	a.waitOutput("connection lost")
	a.pty.Write([]byte("echo late-$((1+1))\r"))
	time.Sleep(1500 * time.Millisecond)
	e.StartServer()
	a.waitOutput("bytes typed while the connection was down for more than 1s were dropped")
	a.pty.Write([]byte("echo after-$((1+1))\r"))
	a.waitOutput("after-2")
	if bytes.Contains(a.bytes(), []byte("late-2")) {
		t.Fatal("keys typed during the outage were typed after it")
	}
}

// An attached client whose server is SIGKILLed reconnects by itself (starting
// a new server) and continues where it was: from the offset it had, or,
// when an output lane may have written past it, from a snapshot; either
// way its screen shows each line once.
func TestAttachSurvivesServerKill(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "k", "--", "sh")
	a := startAttach(t, e, "k", true)
	a.pty.Write([]byte("echo one-$((10+1))\r"))
	a.waitOutput("one-11")
	e.KillServer()
	// The attach starts a new server itself; typing goes on, and what is
	// typed while it reconnects arrives in order with what follows, when
	// it reconnects within keyHold (1 s). A machine too busy to start a
	// server that soon drops it, and says so: typed again, it goes.
	for _, piece := range []string{"echo t", "wo-$((2", "0+2))", "\r"} {
		a.pty.Write([]byte(piece))
		time.Sleep(70 * time.Millisecond)
	}
	a.waitOutput("two-22", "typed while the connection was down")
	if !bytes.Contains(a.bytes(), []byte("two-22")) {
		t.Log("the reconnect took more than keyHold: the keys typed meanwhile were dropped")
		a.pty.Write([]byte("echo two-$((20+2))\r"))
		a.waitOutput("two-22")
	}
	a.mu.Lock()
	out := a.out.String()
	a.mu.Unlock()
	scr := screen.New(90, 30, screen.Options{ScrollbackLines: -1})
	scr.Write([]byte(out))
	if text := scr.Text(0); strings.Count(text, "one-11") != 1 || strings.Count(text, "echo one-") != 1 || !strings.Contains(text, "two-22") {
		t.Fatalf("the screen after reconnect has duplicates or gaps:\n%s\n%q", text, out)
	}
	// The autostarted server is not e.srv: adopt it for cleanup by shutting
	// it down through the API.
	a.pty.Write([]byte{0x1c})
	a.exitCode()
	stopAdopted(t, e) // stopped_test.go
}

// Two clients starting a server at the same moment start one.
func TestAutostartOnce(t *testing.T) {
	e := e2e.NewEnv(t)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(e2e.TkBin, "--state-dir", e.Dir, "ls", "--json")
			cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
			cmd.Run()
		}()
	}
	wg.Wait()
	h, err := e.C.Health(context.Background())
	if err != nil {
		t.Fatalf("no server after autostart: %v", err)
	}
	b, _ := os.ReadFile(e.Dir + "/server.log")
	if n := bytes.Count(b, []byte("is serving")); n != 1 {
		t.Fatalf("%d servers started, want 1 (pid %d)", n, h.Pid)
	}
	// shutdown leaves sessions running; the next server picks them up.
	id := strings.TrimSpace(e.MustTk("new", "--", "cat"))
	pid := *e.Session(id).Pid
	e.MustTk("shutdown")
	e2e.WaitFor(t, 20*time.Second, "the server to stop", func() bool {
		_, err := e.C.Health(context.Background())
		return err != nil
	})
	if syscall.Kill(pid, 0) != nil {
		t.Fatal("shutdown ended a session")
	}
	e.StartServer()
	if s := e.Session(id); s.State != "running" || *s.Pid != pid {
		t.Fatalf("after restart: %+v", s)
	}
	e.MustTk("shutdown", "--sessions")
	e2e.WaitFor(t, 20*time.Second, "the session to end", func() bool { return syscall.Kill(pid, 0) != nil })
	e.Srv.Wait()
	e.Srv = nil
}

// echoOn reports whether the terminal behind a pty master has ECHO set.
func echoOn(t *testing.T, f *os.File) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag&unix.ECHO != 0
}
