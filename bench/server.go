package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
)

// tkServer is a termkeep server the bench started in a fresh state
// directory, with default settings (what a user gets).
type tkServer struct {
	bin string
	dir statedir.Dir
	cmd *exec.Cmd
	c   *client.Client
	// exited is closed once the current cmd has exited (a goroutine waits
	// for it from spawn on).
	exited chan struct{}
}

func (s *tkServer) termkeep() string { return filepath.Join(s.bin, "termkeep") }
func (s *tkServer) pid() int         { return s.cmd.Process.Pid }

// startServer runs `termkeep serve` as the bench's own child rather than
// relying on autostart, so the bench knows its pid (for CPU and memory) and
// can always stop it. It gets its own process group: a Ctrl-C at the bench's
// terminal must reach only the bench, which then shuts everything down in
// order (the server has to be alive to end its sessions).
func startServer(ctx context.Context, bin string) (*tkServer, error) {
	dir, err := os.MkdirTemp("", "tkb")
	if err != nil {
		return nil, err
	}
	s := &tkServer{bin: bin, dir: statedir.Dir(dir), c: client.New(statedir.Dir(dir))}
	if err := s.spawn(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.waitHealthy(ctx, 15*time.Second); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// spawn starts `termkeep serve` in the server's state directory, its log
// appended to benchServeLog, and returns without waiting for it to answer.
func (s *tkServer) spawn() error {
	logf, err := os.OpenFile(filepath.Join(string(s.dir), benchServeLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	// A free port for the browser listener: the default one may be taken
	// by a server the user runs, and the WebSocket viewers need one.
	s.cmd = exec.Command(s.termkeep(), "--state-dir", string(s.dir), "serve", "--listen", "127.0.0.1:0")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s.exited = make(chan struct{})
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start termkeep serve: %w", err)
	}
	go func(cmd *exec.Cmd, exited chan struct{}) { cmd.Wait(); close(exited) }(s.cmd, s.exited)
	return nil
}

// waitHealthy polls the server until it answers, every 2 ms (a dial of a
// unix socket nobody listens on fails at once).
func (s *tkServer) waitHealthy(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		hctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := s.c.Health(hctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("termkeep serve exited at start (see its log in %s)", s.dir)
		default:
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return fmt.Errorf("termkeep serve did not answer (see its log in %s): %w", s.dir, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stop sends the server sig and waits (up to timeout) for it to exit,
// leaving the sessions' holders running. It returns how long the exit took.
func (s *tkServer) stop(sig syscall.Signal, timeout time.Duration) (time.Duration, error) {
	t0 := time.Now()
	if err := s.cmd.Process.Signal(sig); err != nil {
		return 0, fmt.Errorf("signal termkeep serve: %w", err)
	}
	select {
	case <-s.exited:
		return time.Since(t0), nil
	case <-time.After(timeout):
		return time.Since(t0), fmt.Errorf("termkeep serve did not exit within %v of %v", timeout, sig)
	}
}

// benchServeLog is where the bench sends the foreground server's log.
const benchServeLog = "bench-serve.log"

// resyncMsg is what the server logs each time it skips a viewer that fell
// behind to the present with a snapshot.
const resyncMsg = "viewer fell behind; skipped it to the present with a snapshot"

// resyncs counts the server's resyncs so far, from its log (the one the
// bench captures, and server.log should the server also write one).
func (s *tkServer) resyncs() int {
	n := 0
	for _, p := range []string{filepath.Join(string(s.dir), benchServeLog), s.dir.ServerLog()} {
		b, _ := os.ReadFile(p)
		n += strings.Count(string(b), resyncMsg)
	}
	return n
}

// create starts a session, its child's environment the bench's with TERM
// and setEnv (KEY=VALUE) set, and returns it with its holder's pid, which
// only meta.json records.
func (s *tkServer) create(ctx context.Context, name string, argv []string, setEnv ...string) (api.Session, int, error) {
	cwd, _ := os.Getwd()
	sess, err := s.c.Create(ctx, api.CreateRequest{
		Name: name, Command: argv, Cwd: cwd, Cols: termCols, Rows: termRows,
		Env: os.Environ(), SetEnv: append([]string{"TERM=xterm-256color"}, setEnv...),
	})
	if err != nil {
		return sess, 0, fmt.Errorf("create session %s: %w", name, err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		if pid := s.holderPid(sess.ID); pid > 0 {
			return sess, pid, nil
		}
		if time.Now().After(deadline) {
			return sess, 0, fmt.Errorf("session %s: no holder_pid in meta.json", sess.ID)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *tkServer) holderPid(id string) int {
	meta, err := sessiondir.ReadMeta(s.dir.Session(id))
	if err != nil {
		return 0
	}
	return meta.HolderPid
}

// close ends every session and the server, then removes the state
// directory. It does not take a context: it runs after a cancel too. Holders
// are detached from the server (they survive it by design), so any still
// alive after the shutdown are ended here, each checked to still be a
// termkeep process before it is signalled.
func (s *tkServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	shutErr := s.c.Shutdown(ctx, true)

	if s.exited != nil {
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.exited
		}
	}

	ids, _ := os.ReadDir(s.dir.SessionsDir())
	var holders []int
	for _, id := range ids {
		if pid := s.holderPid(id.Name()); pid > 0 && strings.Contains(procCmdline(pid), "termkeep") {
			holders = append(holders, pid)
		}
	}
	if len(holders) > 0 {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			if !anyAlive(holders) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		for _, pid := range holders {
			if alive(pid) && strings.Contains(procCmdline(pid), "termkeep") {
				fmt.Fprintf(os.Stderr, "bench: holder %d outlived the shutdown (%v); killing it\n", pid, shutErr)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if keepLogs != "" {
		keepServerLog(s.dir)
	}
	os.RemoveAll(string(s.dir))
}

// keepLogs is -keep-logs: where close copies each server's log.
var keepLogs string

var keptLogs atomic.Int64

func keepServerLog(dir statedir.Dir) {
	b, err := os.ReadFile(filepath.Join(string(dir), benchServeLog))
	if err == nil {
		os.MkdirAll(keepLogs, 0o700)
		name := filepath.Join(keepLogs, fmt.Sprintf("serve-%03d.log", keptLogs.Add(1)))
		err = os.WriteFile(name, b, 0o600)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: keep the server log: %v\n", err)
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func anyAlive(pids []int) bool {
	for _, p := range pids {
		if alive(p) {
			return true
		}
	}
	return false
}
