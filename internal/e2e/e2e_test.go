// Package e2e tests termkeep end to end: the real binaries, a real server
// process (killed with SIGKILL when a test says so), real holders, real ptys
// and shells, a real SQLite file.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/term"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
	"termkeep/internal/wire"
)

var (
	binDir  string // holds termkeep and termkeep-holder built for the tests
	tkBin   string
	selfBin string // this test binary, which doubles as a child program
)

// The test binary doubles as the child program of some sessions: run with
// TK_CHILD set, it does that job instead of running tests.
// Tests that spend their time waiting (for a server, a timeout, a shell)
// rather than working call t.Parallel(): they run two at a time after the
// others, each with its own state directory and server. Tests that measure
// time, flood output or change the process's limits stay serial.
func TestMain(m *testing.M) {
	if mode := os.Getenv("TK_CHILD"); mode != "" {
		if code, ok := listenerChild(mode); ok { // listener_test.go
			os.Exit(code)
		}
		os.Exit(childMain(mode))
	}
	dir, err := os.MkdirTemp("", "tkbin")
	if err != nil {
		panic(err)
	}
	binDir = dir
	tkBin = filepath.Join(dir, "termkeep")
	root := moduleRoot()
	for _, b := range []struct{ out, pkg string }{{"termkeep", "./cmd/termkeep"}, {"termkeep-holder", "./cmd/termkeep-holder"}} {
		args := []string{"build", "-o", filepath.Join(dir, b.out)}
		if raceEnabled {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, b.pkg)...)
		cmd.Dir = root
		if b.out == "termkeep-holder" && !raceEnabled {
			// As make build builds it: static, without libc (the race
			// detector needs cgo).
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build:", err)
			os.Exit(1)
		}
	}
	selfBin, _ = os.Executable()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// pattern returns n deterministic pseudo-random bytes (every byte value,
// escape sequences and invalid UTF-8 included): what a writer child prints.
func pattern(seed int64, n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

// childMain is the child program: TK_CHILD=writer puts its tty in raw mode
// (so the pty passes bytes unchanged), writes TK_BYTES bytes of pattern(TK_SEED)
// in chunks with TK_PAUSE between them, then waits for a 'q' on its input
// and exits with TK_CODE.
func childMain(mode string) int {
	switch mode {
	case "writer":
		n, _ := strconv.Atoi(os.Getenv("TK_BYTES"))
		seed, _ := strconv.ParseInt(os.Getenv("TK_SEED"), 10, 64)
		pause, _ := time.ParseDuration(os.Getenv("TK_PAUSE"))
		chunk := 64 << 10
		if c, err := strconv.Atoi(os.Getenv("TK_CHUNK")); err == nil {
			chunk = c
		}
		code, _ := strconv.Atoi(os.Getenv("TK_CODE"))
		if _, err := term.MakeRaw(0); err != nil {
			fmt.Fprintln(os.Stderr, "raw:", err)
			return 3
		}
		if os.Getenv("TK_GO") != "" {
			var b [1]byte
			os.Stdin.Read(b[:]) // wait for the test's go
		}
		data := pattern(seed, n)
		for len(data) > 0 {
			k := min(chunk, len(data))
			if _, err := os.Stdout.Write(data[:k]); err != nil {
				return 4
			}
			data = data[k:]
			if pause > 0 {
				time.Sleep(pause)
			}
		}
		if os.Getenv("TK_WAIT") == "" {
			return code
		}
		var b [1]byte
		for {
			if _, err := os.Stdin.Read(b[:]); err != nil || b[0] == 'q' {
				return code
			}
		}
	case "query":
		// Asks the terminal for the cursor position and its attributes, then
		// reports every byte its input received in two windows of time.
		if _, err := term.MakeRaw(0); err != nil {
			return 3
		}
		var b [1]byte
		os.Stdin.Read(b[:]) // the test's go
		os.Stdout.WriteString("\x1b[6n\x1b[c")
		for _, label := range []string{"GOT1", "GOT2"} {
			got := readFor(3 * time.Second)
			fmt.Fprintf(os.Stdout, "%s:%q:END\r\n", label, got)
		}
		return 0
	case "ask":
		return askChild() // answers_test.go
	}
	return 2
}

// readFor returns what stdin delivers within d.
func readFor(d time.Duration) []byte {
	ch := readStdin()
	var got []byte
	deadline := time.After(d)
	for {
		select {
		case b := <-ch:
			got = append(got, b...)
		case <-deadline:
			return got
		}
	}
}

// readStdin sends what stdin delivers, read by read, until it ends.
func readStdin() <-chan []byte {
	ch := make(chan []byte, 64)
	go func() {
		for {
			buf := make([]byte, 256)
			n, err := os.Stdin.Read(buf)
			ch <- buf[:n]
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// env is one test's termkeep: a state directory and, when started, a server
// process.
type env struct {
	t   *testing.T
	dir string
	srv *server // the server this test started, if it runs
	// serverArgs are extra flags for `termkeep serve`.
	serverArgs []string
	c          *client.Client
	// serverEnv are extra KEY=VALUE variables for `termkeep serve`.
	serverEnv []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	// Unix socket paths are limited to ~108 bytes: keep the state dir short.
	dir, err := os.MkdirTemp("", "tk")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, c: client.New(statedir.Dir(dir))}
	t.Cleanup(e.cleanup)
	return e
}

func (e *env) cleanup() {
	// End every session, whatever state the test left the server in, so no
	// holder outlives the test.
	if _, err := e.c.Health(context.Background()); err != nil {
		e.startServer()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.c.Shutdown(ctx, true)
	if e.srv != nil {
		done := make(chan struct{})
		go func() { e.srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			e.srv.cmd.Process.Kill()
		}
	}
	matches, _ := filepath.Glob(filepath.Join(e.dir, "sessions", "*"))
	for _, m := range matches {
		if meta, err := sessiondir.ReadMeta(m); err == nil && meta.EndedAt == nil {
			syscall.Kill(meta.HolderPid, syscall.SIGKILL)
			syscall.Kill(-meta.Pid, syscall.SIGKILL)
		}
	}
	// Race reports and panics in the server or a holder fail the test that
	// caused them, even though they happen in another process.
	logs, _ := filepath.Glob(filepath.Join(e.dir, "sessions", "*", sessiondir.LogFile))
	for _, p := range append(logs, filepath.Join(e.dir, "server.log")) {
		b, _ := os.ReadFile(p)
		for _, bad := range []string{"WARNING: DATA RACE", "panic:", "fatal error:"} {
			if i := bytes.Index(b, []byte(bad)); i >= 0 {
				e.t.Errorf("%s in %s:\n%s", bad, p, tail(b[i:], 6000))
			}
		}
	}
	if e.t.Failed() {
		if b, err := os.ReadFile(filepath.Join(e.dir, "server.log")); err == nil {
			e.t.Logf("server.log:\n%s", tail(b, 4000))
		}
	}
	if os.Getenv("TK_KEEP_STATE") != "" {
		e.t.Logf("state directory kept: %s", e.dir)
		return
	}
	os.RemoveAll(e.dir)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// startServer starts `termkeep serve` as a child process and waits for it to answer.
func (e *env) startServer() {
	e.t.Helper()
	logf, err := os.OpenFile(filepath.Join(e.dir, "server.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		e.t.Fatal(err)
	}
	defer logf.Close()
	// A server that is still shutting down holds the state directory's lock
	// for a moment: a new one then exits at once, and is started again.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		cmd := exec.Command(tkBin, append([]string{"serve", "--state-dir", e.dir, "--kill-grace", "1s", "--listen", "127.0.0.1:0"}, e.serverArgs...)...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.Env = append(os.Environ(), e.serverEnv...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			e.t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		for time.Now().Before(deadline) {
			if _, err := e.c.Health(context.Background()); err == nil {
				e.srv = &server{cmd: cmd, exited: exited}
				return
			}
			select {
			case <-exited:
			case <-time.After(20 * time.Millisecond):
				continue
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.t.Fatal("timed out waiting for the server to answer")
}

// server is a server process started by a test.
type server struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// Wait waits for the server process to exit.
func (s *server) Wait() { <-s.exited }

// killServer SIGKILLs the server process.
func (e *env) killServer() {
	e.t.Helper()
	e.srv.cmd.Process.Signal(syscall.SIGKILL)
	e.srv.Wait()
	e.srv = nil
}

// tk runs the CLI against this env's state directory with no autostart.
func (e *env) tk(args ...string) (string, string, int) {
	return e.tkIn(nil, args...)
}

func (e *env) tkIn(stdin io.Reader, args ...string) (string, string, int) {
	e.t.Helper()
	cmd := exec.Command(tkBin, append([]string{"--state-dir", e.dir, "--no-autostart"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errb, stdin
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("run termkeep %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// mustTk runs the CLI and fails the test unless it exits 0.
func (e *env) mustTk(args ...string) string {
	e.t.Helper()
	out, errs, code := e.tk(args...)
	if code != 0 {
		e.t.Fatalf("termkeep %v: exit %d: %s", args, code, errs)
	}
	return out
}

// newWriter starts a session whose child writes n bytes of pattern(seed).
func (e *env) newWriter(name string, seed int64, n int, pause time.Duration, wait bool, extra ...string) string {
	e.t.Helper()
	args := []string{"new", "--name", name,
		"--env", "TK_CHILD=writer", "--env", "TK_BYTES=" + strconv.Itoa(n),
		"--env", "TK_SEED=" + strconv.FormatInt(seed, 10), "--env", "TK_PAUSE=" + pause.String()}
	if wait {
		args = append(args, "--env", "TK_WAIT=1")
	}
	args = append(args, extra...)
	args = append(args, "--", selfBin)
	return strings.TrimSpace(e.mustTk(args...))
}

func (e *env) session(ref string) api.Session {
	e.t.Helper()
	s, err := e.c.Get(context.Background(), ref)
	if err != nil {
		e.t.Fatalf("get session %s: %v", ref, err)
	}
	return s
}

func (e *env) ls() []api.Session {
	e.t.Helper()
	var list []api.Session
	if err := json.Unmarshal([]byte(e.mustTk("ls", "--json")), &list); err != nil {
		e.t.Fatalf("ls --json: %v", err)
	}
	return list
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// collect reads a session's stream from offset from until it has the bytes
// up to offset until, and returns them. It checks that every output frame
// starts exactly where the previous one ended.
func collect(t *testing.T, c *client.Client, ref string, from, until uint64) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := c.Attach(ctx, ref, wire.Hello{Role: wire.RoleWaiter, From: int64(from)})
	if err != nil {
		t.Fatalf("attach %s from %d: %v", ref, from, err)
	}
	defer s.Close()
	if s.Welcome.Start != from {
		t.Fatalf("welcome starts at %d, want %d", s.Welcome.Start, from)
	}
	var got []byte
	next := from
	for next < until {
		f, err := s.Next()
		if err != nil {
			t.Fatalf("stream of %s ended at %d, want %d: %v", ref, next, until, err)
		}
		switch f.Type {
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(f.Payload)
			if off != next {
				t.Fatalf("output frame at %d, want %d (gap or duplicate)", off, next)
			}
			got = append(got, data...)
			next += uint64(len(data))
		case wire.TypeGap:
			t.Fatalf("unexpected gap frame")
		case wire.TypeExit:
			if next < until {
				t.Fatalf("session ended at %d before %d", next, until)
			}
		}
	}
	return got[:until-from]
}

func checkBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Fatalf("%s: %d bytes, want %d; first difference at byte %d", what, len(got), len(want), i)
}
