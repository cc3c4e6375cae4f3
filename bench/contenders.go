package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"

	"termkeep/internal/client"
	"termkeep/internal/wire"
)

// env is what every contender shares for one bench invocation.
type env struct {
	bin   string // directory holding termkeep and termkeep-holder
	work  string // the bench's temporary directory
	file  string // the throughput workload
	m     markers
	seq   int // numbers tmux sockets so no two runs share a server
	files map[int]workloadFile
}

type workloadFile struct {
	path string
	size int64
}

// workload returns the workload file of mib MiB, writing it the first time.
func (e *env) workload(mib int) (string, int64, error) {
	if f, ok := e.files[mib]; ok {
		return f.path, f.size, nil
	}
	if e.files == nil {
		e.files = map[int]workloadFile{}
	}
	path := filepath.Join(e.work, fmt.Sprintf("workload-%dMiB.txt", mib))
	started := time.Now()
	size, err := writeWorkload(path, int64(mib)<<20, e.m)
	if err != nil {
		return "", 0, err
	}
	logf("workload: %d bytes of build-log lines in %v", size, time.Since(started).Round(time.Millisecond))
	e.files[mib] = workloadFile{path, size}
	return path, size, nil
}

// contender is one way of getting the workload onto a viewer.
type contender struct {
	name string
	note string // how the viewer is wired, for the report
	run  func(ctx context.Context, e *env) (sample, error)
}

func contenders() []contender {
	return []contender{
		{"raw pty", "cat in a pty; the bench reads the master", runRaw},
		{"two ptys (script)", "reference: `script` relays a pty running cat into a second pty the bench reads; the best any viewer that is itself in a terminal, such as termkeep attach, can do", runScript},
		{"tmux", "tmux attach in a pty; the session runs cat", runTmux},
		{"dtach", "`dtach -a` in a pty, its master running cat: the minimal relay, with no log", runDtach},
		{"termkeep attach", "termkeep attach in a pty; the session runs cat", runTermkeepAttach},
		{"termkeep wire client", "internal/client viewer, no second pty", runTermkeepWire},
	}
}

var winsize = &pty.Winsize{Cols: termCols, Rows: termRows}

// viewerEnv is the environment of a viewer the bench starts in a pty: a
// known TERM, and no TMUX so tmux does not refuse to nest when the bench
// itself runs inside tmux.
// newTmux returns how to run tmux against a server of its own, on a fresh
// socket in the bench's temporary directory (kill-server leaves no socket
// behind once that directory goes), with no configuration file.
func (e *env) newTmux() (tmux func(ctx context.Context, args ...string) *exec.Cmd, sock string) {
	e.seq++
	sock = filepath.Join(e.work, fmt.Sprintf("tmux-%d.sock", e.seq))
	return func(ctx context.Context, args ...string) *exec.Cmd {
		c := exec.CommandContext(ctx, "tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...)
		c.Env = viewerEnv()
		return c
	}, sock
}

// tmuxSession starts a fresh tmux server with one session, "b", of
// cols×rows running command (args are more tmux commands, after a ";"),
// and returns how to run tmux against it and what ends it. The server
// outlives the caller unless told: stop kills it even when ctx is
// already cancelled.
func (e *env) tmuxSession(ctx context.Context, cols, rows int, command string, args ...string) (tmux func(ctx context.Context, args ...string) *exec.Cmd, stop func(), err error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, nil, fmt.Errorf("%w: tmux is not installed", errSkipped)
	}
	tmux, sock := e.newTmux()
	stop = func() {
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		tmux(c, "kill-server").Run()
		os.Remove(sock)
	}
	all := []string{"new-session", "-d", "-s", "b", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), command}
	if len(args) > 0 {
		all = append(append(all, ";"), args...)
	}
	if out, err := tmux(ctx, all...).CombinedOutput(); err != nil {
		stop()
		return nil, nil, fmt.Errorf("tmux new-session: %v: %s", err, out)
	}
	return tmux, stop, nil
}

func viewerEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TMUX=") || strings.HasPrefix(kv, "TERM=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "TERM=xterm-256color")
}

// startInPty starts cmd in a new pty of the test size. The returned stop
// kills the process's whole session (pty.Start makes it a session leader) so
// that a blocked read of the master returns, waits for it, and closes the
// master; it is safe to call more than once.
func startInPty(cmd *exec.Cmd) (*os.File, func(), error) {
	ptmx, err := pty.StartWithSize(cmd, winsize)
	if err != nil {
		return nil, nil, fmt.Errorf("start %s in a pty: %w", cmd.Path, err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		ptmx.Close()
	}
	return ptmx, stop, nil
}

// runRaw is the physical limit: cat writes into a pty and the bench reads
// the master directly, with nothing in between.
func runRaw(ctx context.Context, e *env) (sample, error) {
	cmd := exec.Command("sh", "-c", e.m.childScript(e.file))
	ptmx, stop, err := startInPty(cmd)
	if err != nil {
		return sample{}, err
	}
	defer stop()
	return timeRun(ctx, run{
		src:      newPtySource(ptmx),
		sendGo:   func() error { _, err := ptmx.Write([]byte("\r")); return err },
		abort:    func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) },
		childPid: cmd.Process.Pid,
	}, e.m)
}

// runScript relays one pty into another and nothing else: the cost of the
// second pty that termkeep attach (or any viewer in a terminal) adds. script
// puts its own terminal in raw mode, as attach does, so the bytes reaching
// the bench are the same as attach's.
func runScript(ctx context.Context, e *env) (sample, error) {
	if _, err := exec.LookPath("script"); err != nil {
		return sample{}, fmt.Errorf("%w: script (util-linux) is not installed", errSkipped)
	}
	cmd := exec.Command("script", "-q", "-e", "-c", e.m.childScript(e.file), "/dev/null")
	cmd.Env = viewerEnv()
	ptmx, stop, err := startInPty(cmd)
	if err != nil {
		return sample{}, err
	}
	defer stop()
	r := run{
		src:      newPtySource(ptmx),
		abort:    func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) },
		ownerPid: cmd.Process.Pid,
	}
	r.sendGo = func() error { _, err := ptmx.Write([]byte("\r")); return err }
	r.findChild = func() int { return firstChild(cmd.Process.Pid) }
	return timeRun(ctx, r, e.m)
}

// runTmux measures what a tmux viewer sees. tmux renders: it parses the
// output into its screen and redraws the attached client, so the viewer gets
// a different (often much smaller) byte stream than the child wrote; the bench
// watches for the marker text on the drawn screen.
func runTmux(ctx context.Context, e *env) (sample, error) {
	tmux, stopTmux, err := e.tmuxSession(ctx, termCols, termRows, e.m.childScript(e.file)) // a fresh tmux server each run
	if err != nil {
		return sample{}, err
	}
	defer stopTmux()
	out, err := tmux(ctx, "display-message", "-p", "-t", "b", "#{pid} #{pane_pid}").Output()
	if err != nil {
		return sample{}, fmt.Errorf("tmux display-message: %w", err)
	}
	var serverPid, panePid int
	if _, err := fmt.Sscan(string(out), &serverPid, &panePid); err != nil {
		return sample{}, fmt.Errorf("tmux display-message: %q: %w", out, err)
	}
	attach := tmux(context.Background(), "attach-session", "-t", "b")
	ptmx, stop, err := startInPty(attach)
	if err != nil {
		return sample{}, err
	}
	defer stop()
	s, err := timeRun(ctx, run{
		src:       newPtySource(ptmx),
		sendGo:    func() error { _, err := ptmx.Write([]byte("\r")); return err },
		abort:     func() { syscall.Kill(-attach.Process.Pid, syscall.SIGKILL) },
		childPid:  panePid,
		ownerPid:  serverPid,
		viewerPid: attach.Process.Pid,
	}, e.m)
	if err != nil {
		// Say whether tmux has the marker on its pane and only never drew
		// it to the client, or never got that far.
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if out, cerr := tmux(c, "capture-pane", "-p", "-t", "b").Output(); cerr == nil {
			if bytes.Contains(out, e.m.end) {
				err = fmt.Errorf("%w (the pane shows the end marker: tmux did not draw it to the attached client)", err)
			} else {
				err = fmt.Errorf("%w (the pane does not show the end marker yet)", err)
			}
		}
	}
	return s, err
}

// attachArgs is -attach-args: more arguments of the contenders' attach.
var attachArgs []string

// attachArgv is the arguments of the contenders' termkeep attach to
// server srv, but the session.
func attachArgv(srv *tkServer) []string {
	return append([]string{"--state-dir", string(srv.dir), "--no-autostart", "attach"}, attachArgs...)
}

// runTermkeepAttach measures the whole path a user sees: holder → log →
// server → termkeep attach → its pty → the bench. A fresh server and state
// directory per run, so no run inherits another's log or window.
func runTermkeepAttach(ctx context.Context, e *env) (sample, error) {
	srv, err := startServer(ctx, e.bin)
	if err != nil {
		return sample{}, err
	}
	defer srv.close()
	sess, holderPid, err := srv.create(ctx, "b", []string{"sh", "-c", e.m.childScript(e.file)})
	if err != nil {
		return sample{}, err
	}
	cmd := exec.Command(srv.termkeep(), append(attachArgv(srv), "b")...)
	cmd.Env = viewerEnv()
	ptmx, stop, err := startInPty(cmd)
	if err != nil {
		return sample{}, err
	}
	defer stop()
	s, err := timeRun(ctx, run{
		src:       newPtySource(ptmx),
		sendGo:    func() error { _, err := ptmx.Write([]byte("\r")); return err },
		abort:     func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) },
		childPid:  derefPid(sess.Pid),
		ownerPid:  holderPid,
		serverPid: srv.pid(),
		viewerPid: cmd.Process.Pid,
	}, e.m)
	s.termkeep, s.resyncs = true, srv.resyncs()
	return s, err
}

// runTermkeepWire is the server path without the attach process and its
// pty: the bench is the viewer, speaking wire frames through the client
// package.
func runTermkeepWire(ctx context.Context, e *env) (sample, error) {
	srv, err := startServer(ctx, e.bin)
	if err != nil {
		return sample{}, err
	}
	defer srv.close()
	sess, holderPid, err := srv.create(ctx, "b", []string{"sh", "-c", e.m.childScript(e.file)})
	if err != nil {
		return sample{}, err
	}
	st, err := client.New(srv.dir).Attach(ctx, "b", wire.Hello{Role: wire.RoleViewer, From: 0, Cols: termCols, Rows: termRows})
	if err != nil {
		return sample{}, fmt.Errorf("attach with the wire client: %w", err)
	}
	defer st.Close()
	src := &wireSource{st: st}
	s, err := timeRun(ctx, run{
		src:       src,
		sendGo:    func() error { return st.Input([]byte("\r")) },
		abort:     func() { st.Close() },
		childPid:  derefPid(sess.Pid),
		ownerPid:  holderPid,
		serverPid: srv.pid(),
	}, e.m)
	s.gaps, s.snapshots = src.stats.gaps, src.stats.snapshots
	s.termkeep, s.resyncs = true, srv.resyncs()
	return s, err
}

func derefPid(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// wireSource yields the data of Output frames, and of Snapshot frames: a
// viewer that falls too far behind is skipped to the present with a
// snapshot of the screen, which is then where the end marker shows. Gap and
// snapshot frames are counted, since a viewer that skips bytes is not moving
// all of them.
type wireSource struct {
	st    *client.Stream
	stats frameStats
}

func (w *wireSource) next() ([]byte, error) {
	for {
		f, err := w.st.Next()
		if err != nil {
			return nil, err
		}
		if data, ok, err := w.stats.terminalBytes(f); err != nil || ok {
			return data, err
		}
	}
}
