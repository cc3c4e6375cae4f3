// Package e2e tests termkeep end to end: the real binaries, a real server
// process (killed with SIGKILL when a test says so), real holders, real ptys
// and shells, a real SQLite file.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/term"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/holder"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
	"termkeep/internal/testproc"
	"termkeep/internal/wire"
)

// Set by Main before the tests run.
var (
	BinDir  string // holds termkeep, termkeep-server and termkeep-holder built for the tests
	TkBin   string // the termkeep binary in BinDir
	SelfBin string // this test binary, which doubles as a child program
)

// Main runs one area's end-to-end tests; each area package's TestMain
// calls it. The test binary doubles as the child program of some sessions:
// run with TK_CHILD set, it does that job instead of running tests. Else
// it builds termkeep, termkeep-server and termkeep-holder (with the race
// detector when the tests have it) into a temporary directory, runs the
// tests, and removes the directory. Each package links its own binaries: the compiled packages
// come from Go's build cache, so a package after the first pays only the
// link; `make test` builds them once for all of them and names their
// directory in TK_E2E_BIN_DIR.
//
// Tests that spend their time waiting (for a server, a timeout, a shell)
// rather than working call t.Parallel(): they run four at a time (unless
// -test.parallel says otherwise) after the others, each with its own
// state directory and server. Tests that measure
// time, flood output or change the process's limits stay serial.
func Main(m *testing.M) { run(m, RaceEnabled) }

// MainPlain is Main for a package whose tests start hundreds of servers
// and CLI runs, push many MiB through them, or kill them again and again
// against the clock: the binaries it runs are built without the race
// detector (the test binary keeps it), from the directory in
// TK_E2E_PLAIN_BIN_DIR when set. Under the race detector a server's start
// costs four times the CPU, most of it the detector's own memory, and a
// crash loop's rounds slow past their deadlines on a busy machine. Races
// in the server are the business of the packages that run it
// concurrently (core, viewers, web, chaos, soak) and of its own
// package's tests.
func MainPlain(m *testing.M) { run(m, false) }

func run(m *testing.M, race bool) {
	if mode := os.Getenv("TK_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	// testproc gives the tests an environment without the user's
	// TERMKEEP_ variables and a run directory of their own, and ends every
	// process they leave, even when this binary is killed.
	os.Exit(testproc.Run(runner{m, race}))
}

// runner runs the tests inside testproc's run, with binaries built with
// the race detector or without.
type runner struct {
	m    *testing.M
	race bool
}

func (r runner) Run() int {
	// Quiet detection is off for the servers the e2e tests start (they
	// inherit the test binary's environment), except where a test turns it
	// on: many tests check a session's exact list of events, and a
	// session.quiet event whenever a step of theirs takes 2 s on a loaded
	// machine would make them flaky. TestQuietSince turns it on for its own
	// server.
	os.Setenv("TERMKEEP_QUIET_AFTER", "0")
	// A binary built with -race sleeps a second at exit (so that a report
	// from another thread can finish printing): every CLI run, server and
	// holder the tests start would pay it, minutes in all. Races are still
	// reported, and Cleanup still fails the test that caused one.
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=0"))
	}
	BinDir = os.Getenv("TK_E2E_BIN_DIR")
	if r.race != RaceEnabled {
		BinDir = os.Getenv("TK_E2E_PLAIN_BIN_DIR")
	}
	var err error
	if BinDir == "" {
		BinDir, err = buildBinaries(r.race) // in the run directory, removed with it
	} else {
		err = checkBinDir(BinDir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e binaries:", err)
		return 1
	}
	TkBin = filepath.Join(BinDir, "termkeep")
	SelfBin, _ = os.Executable()
	// The parallel tests mostly wait: with GOMAXPROCS's two at a time a
	// package's waits queue behind each other, past a third of its
	// timeout on a busy 2-core machine.
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "4")
	}
	return r.m.Run()
}

// child runs the child program TK_CHILD names and returns its exit status.
func child(mode string) int {
	if code, ok := listenerChild(mode); ok { // listener.go
		return code
	}
	switch mode {
	case "lines":
		return linesChild() // lines.go
	case "numbered":
		return numberedChild() // numbered.go
	}
	return childMain(mode)
}

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Pattern returns n deterministic pseudo-random bytes (every byte value,
// escape sequences and invalid UTF-8 included): what a writer child prints.
func Pattern(seed int64, n int) []byte {
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
		data := Pattern(seed, n)
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
		return askChild() // ask.go
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

// Env is one test's termkeep: a state directory and, when started, a server
// process.
type Env struct {
	T   *testing.T
	Dir string
	Srv *server // the server this test started, if it runs
	// serverArgs are extra flags for `termkeep serve`.
	ServerArgs []string
	C          *client.Client
	// serverEnv are extra KEY=VALUE variables for `termkeep serve`.
	ServerEnv []string
}

// NewEnv makes a test's env with a fresh state directory; the server is
// not started. The env is cleaned up when the test ends.
func NewEnv(t *testing.T) *Env {
	t.Helper()
	// Unix socket paths are limited to ~108 bytes: keep the state dir short.
	dir, err := os.MkdirTemp("", "tk")
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{T: t, Dir: dir, C: client.New(statedir.Dir(dir))}
	t.Cleanup(e.Cleanup)
	return e
}

// Cleanup ends every session and the server, fails the test on a race
// report or panic in their logs, and removes the state directory (kept
// when TK_KEEP_STATE is set). NewEnv registers it with t.Cleanup.
func (e *Env) Cleanup() {
	// End every session, whatever state the test left the server in, so no
	// holder outlives the test.
	if _, err := e.C.Health(context.Background()); err != nil {
		e.StartServer()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.C.Shutdown(ctx, true)
	if e.Srv != nil {
		done := make(chan struct{})
		go func() { e.Srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			e.Srv.Cmd.Process.Kill()
		}
	}
	matches, _ := filepath.Glob(filepath.Join(e.Dir, "sessions", "*"))
	for _, m := range matches {
		if meta, err := sessiondir.ReadMeta(m); err == nil && meta.EndedAt == nil {
			syscall.Kill(meta.HolderPid, syscall.SIGKILL)
			syscall.Kill(-meta.Pid, syscall.SIGKILL)
		} else if err != nil {
			// meta.json damaged by the test: the lock file names the holder,
			// whose death hangs up its child.
			b, _ := os.ReadFile(filepath.Join(m, sessiondir.LockFile))
			if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); holder.IsHolder(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	// Race reports and panics in the server or a holder fail the test that
	// caused them, even though they happen in another process.
	logs, _ := filepath.Glob(filepath.Join(e.Dir, "sessions", "*", sessiondir.LogFile))
	for _, p := range append(logs, filepath.Join(e.Dir, "server.log")) {
		b, _ := os.ReadFile(p)
		for _, bad := range []string{"WARNING: DATA RACE", "panic:", "fatal error:"} {
			if i := bytes.Index(b, []byte(bad)); i >= 0 {
				e.T.Errorf("%s in %s:\n%s", bad, p, Tail(b[i:], 6000))
			}
		}
	}
	if e.T.Failed() {
		if b, err := os.ReadFile(filepath.Join(e.Dir, "server.log")); err == nil {
			e.T.Logf("server.log:\n%s", Tail(b, 4000))
		}
	}
	// Whatever still runs for this state directory (a server a CLI run
	// started, a holder whose server is gone, their children) ends here.
	if pids := testproc.Reap(e.Dir); len(pids) > 0 {
		e.T.Logf("ended %d processes left running for %s: %v", len(pids), e.Dir, pids)
	}
	if os.Getenv("TK_KEEP_STATE") != "" {
		e.T.Logf("state directory kept: %s", e.Dir)
		return
	}
	os.RemoveAll(e.Dir)
}

// Tail returns the last n bytes of b (all of b when shorter).
func Tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// StartServer starts `termkeep serve` as a child process and waits for it to answer.
func (e *Env) StartServer() {
	e.T.Helper()
	logf, err := os.OpenFile(filepath.Join(e.Dir, "server.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		e.T.Fatal(err)
	}
	defer logf.Close()
	// A server that is still shutting down holds the state directory's lock
	// for a moment: a new one then exits at once, and is started again.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		cmd := exec.Command(TkBin, append([]string{"serve", "--state-dir", e.Dir, "--kill-grace", "1s", "--listen", "127.0.0.1:0"}, e.ServerArgs...)...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.Env = append(os.Environ(), e.ServerEnv...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			e.T.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		for time.Now().Before(deadline) {
			if _, err := e.C.Health(context.Background()); err == nil {
				e.Srv = &server{Cmd: cmd, exited: exited}
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
	e.T.Fatal("timed out waiting for the server to answer")
}

// server is a server process started by a test.
type server struct {
	Cmd    *exec.Cmd
	exited chan struct{}
}

// Wait waits for the server process to exit.
func (s *server) Wait() { <-s.exited }

// KillServer SIGKILLs the server process.
// ShutdownServer stops the server with `termkeep shutdown`, which leaves
// its sessions running, and waits for it to exit.
func (e *Env) ShutdownServer() {
	e.T.Helper()
	e.MustTk("shutdown")
	e.Srv.Wait()
	e.Srv = nil
}

func (e *Env) KillServer() {
	e.T.Helper()
	e.Srv.Cmd.Process.Signal(syscall.SIGKILL)
	e.Srv.Wait()
	e.Srv = nil
}

// Tk runs the CLI against this env's state directory with no autostart.
func (e *Env) Tk(args ...string) (string, string, int) {
	return e.TkIn(nil, args...)
}

// TkIn is Tk with stdin as the CLI's input.
func (e *Env) TkIn(stdin io.Reader, args ...string) (string, string, int) {
	e.T.Helper()
	return e.run(stdin, nil, "", args...)
}

// TkEnv is Tk with extraEnv (KEY=VALUE, over the test's own environment)
// and, unless "", dir as the CLI's working directory.
func (e *Env) TkEnv(extraEnv []string, dir string, args ...string) (string, string, int) {
	e.T.Helper()
	return e.run(nil, extraEnv, dir, args...)
}

func (e *Env) run(stdin io.Reader, extraEnv []string, dir string, args ...string) (string, string, int) {
	e.T.Helper()
	cmd := exec.Command(TkBin, append([]string{"--state-dir", e.Dir, "--no-autostart"}, args...)...)
	if extraEnv != nil {
		cmd.Env = append(os.Environ(), extraEnv...)
	}
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errb, stdin
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.T.Fatalf("run termkeep %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// MustTk runs the CLI and fails the test unless it exits 0.
func (e *Env) MustTk(args ...string) string {
	e.T.Helper()
	out, errs, code := e.Tk(args...)
	if code != 0 {
		e.T.Fatalf("termkeep %v: exit %d: %s", args, code, errs)
	}
	return out
}

// NewWriter starts a session whose child writes n bytes of Pattern(seed).
// With "TK_GO=1" among extra it returns once the child waits for its go.
func (e *Env) NewWriter(name string, seed int64, n int, pause time.Duration, wait bool, extra ...string) string {
	e.T.Helper()
	args := []string{"new", "--name", name,
		"--env", "TK_CHILD=writer", "--env", "TK_BYTES=" + strconv.Itoa(n),
		"--env", "TK_SEED=" + strconv.FormatInt(seed, 10), "--env", "TK_PAUSE=" + pause.String()}
	if wait {
		args = append(args, "--env", "TK_WAIT=1")
	}
	args = append(args, extra...)
	args = append(args, "--", SelfBin)
	id := strings.TrimSpace(e.MustTk(args...))
	if slices.Contains(extra, "TK_GO=1") {
		e.WaitRaw(id) // the go must not be echoed
	}
	return id
}

// Session gets a session from the server, failing the test if it cannot.
func (e *Env) Session(ref string) api.Session {
	e.T.Helper()
	s, err := e.C.Get(context.Background(), ref)
	if err != nil {
		e.T.Fatalf("get session %s: %v", ref, err)
	}
	return s
}

// Ls is `termkeep ls --json`, decoded.
func (e *Env) Ls() []api.Session {
	e.T.Helper()
	var list []api.Session
	if err := json.Unmarshal([]byte(e.MustTk("ls", "--json")), &list); err != nil {
		e.T.Fatalf("ls --json: %v", err)
	}
	return list
}

// WaitFor polls cond every 20 ms until it holds, and fails the test with
// what once d has passed. Give d room: the tests run on busy machines.
func WaitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Collect reads a session's stream from offset from until it has the bytes
// up to offset until, and returns them. It checks that every output frame
// starts exactly where the previous one ended.
func Collect(t *testing.T, c *client.Client, ref string, from, until uint64) []byte {
	t.Helper()
	got, err := CollectErr(c, ref, from, until)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// CollectErr is Collect for a goroutine other than the test's: it reports
// what went wrong instead of failing the test, which a goroutine must not
// do once the test may have returned.
func CollectErr(c *client.Client, ref string, from, until uint64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := c.Attach(ctx, ref, wire.Hello{Role: wire.RoleWaiter, From: int64(from)})
	if err != nil {
		return nil, fmt.Errorf("attach %s from %d: %v", ref, from, err)
	}
	defer s.Close()
	if s.Welcome.Start != from {
		return nil, fmt.Errorf("welcome starts at %d, want %d", s.Welcome.Start, from)
	}
	var got []byte
	next := from
	for next < until {
		f, err := s.Next()
		if err != nil {
			return nil, fmt.Errorf("stream of %s ended at %d, want %d: %v", ref, next, until, err)
		}
		switch f.Type {
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(f.Payload)
			if off != next {
				return nil, fmt.Errorf("output frame at %d, want %d (gap or duplicate)", off, next)
			}
			got = append(got, data...)
			next += uint64(len(data))
		case wire.TypeGap:
			return nil, fmt.Errorf("unexpected gap frame")
		case wire.TypeExit:
			if next < until {
				return nil, fmt.Errorf("session ended at %d before %d", next, until)
			}
		}
	}
	return got[:until-from], nil
}

// CheckBytes fails the test unless got equals want, naming the first
// byte where they differ.
func CheckBytes(t *testing.T, what string, got, want []byte) {
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
