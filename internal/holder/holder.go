// Package holder is the small process that owns one session's pty.
//
// A holder starts the child in a pty, reads the pty at the child's pace and
// appends every chunk to the session's output log before anyone else sees it
// (write-ahead), serves one upstream connection (the server) on
// holder.sock, applies input, resizes and signals, writes meta.json, and
// records the child's exit status. It runs detached in its own session, so it
// outlives the server that started it: a server crash or upgrade never
// touches the child. While no server is connected it keeps reading and
// logging; the child never blocks on termkeep.
//
// The upstream connection is fed from the log itself (a cursor that follows
// the log's end), so a server that is slow or gone costs the holder nothing
// but a position, and a server that comes back resumes at any retained
// offset with no gap and no duplicate.
package holder

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"termkeep/internal/outlog"
	"termkeep/internal/peercred"
	"termkeep/internal/rawio"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// Spec is what the server sends a new holder on its standard input, as JSON.
// The environment travels here rather than on disk so that nothing but the
// allowlisted subset (Spec.KeepEnv) ever reaches the state directory.
type Spec struct {
	ID      string   `json:"id"`
	Dir     string   `json:"dir"` // the session directory
	Command []string `json:"command"`
	Env     []string `json:"env"`
	KeepEnv []string `json:"keep_env,omitempty"` // the subset recorded in meta.json
	Cwd     string   `json:"cwd"`
	Cols    uint16   `json:"cols"`
	Rows    uint16   `json:"rows"`
	// Name and Workspace are the session's in the registry, kept in
	// meta.json so that a registry rebuilt from it loses neither.
	Name      string `json:"name,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	// EnvPolicy is how the server made Env (its registry's env_policy),
	// kept in meta.json so that restores of a rebuilt registry's session
	// make it the same way.
	EnvPolicy string `json:"env_policy,omitempty"`

	// Banner is written into the log, as termkeep's own bytes (a mark
	// record), before the child starts: a restore's line between the old
	// screen and the new process.
	Banner string `json:"banner,omitempty"`

	LogRetention int64  `json:"log_retention,omitempty"`
	LogSync      string `json:"log_sync,omitempty"` // "interval" (default), "always", "never"
}

// Ready is the holder's one-line answer on its standard output: the child's
// pid once it runs, or why it could not start.
type Ready struct {
	Pid       int `json:"pid,omitempty"`
	HolderPid int `json:"holder_pid,omitempty"`
	// Start is the log offset this holder's output (its banner first)
	// begins at: 0 for a new session, the old log's end for a restore.
	Start uint64 `json:"start"`
	Error string `json:"error,omitempty"`
}

// logTimeEvery spaces the output log's Time records while output flows:
// a replay's moment, and an export's event times, are then within 100 ms
// of when the bytes were logged (docs/protocol.md, Replay).
const logTimeEvery = 100 * time.Millisecond

// Main runs a holder: it reads a Spec from stdin, answers Ready on stdout,
// and serves until the child has exited and its output is logged. It returns
// the process exit code.
func Main() int {
	var spec Spec
	if err := json.NewDecoder(os.Stdin).Decode(&spec); err != nil {
		json.NewEncoder(os.Stdout).Encode(Ready{Error: "holder: read spec: " + err.Error()})
		return 1
	}
	h, err := start(spec)
	if err != nil {
		json.NewEncoder(os.Stdout).Encode(Ready{Error: err.Error()})
		return 1
	}
	json.NewEncoder(os.Stdout).Encode(Ready{Pid: h.cmd.Process.Pid, HolderPid: os.Getpid(), Start: h.start})
	detachStdio(h.logf)
	return h.run()
}

// detachStdio points the standard streams away from the server's pipes, so
// the holder never dies of a write to a closed pipe once the server is gone.
// Stderr goes to the holder's own log file, where a panic would land.
func detachStdio(logf *os.File) {
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		unix.Dup2(int(null.Fd()), 0)
		unix.Dup2(int(null.Fd()), 1)
		null.Close()
	}
	if logf != nil {
		unix.Dup2(int(logf.Fd()), 2)
	}
}

type holder struct {
	spec   Spec
	log    *slog.Logger
	logf   *os.File
	out    *outlog.Log
	ptmx   *os.File
	ptmxRC syscall.RawConn // ptmx's descriptor, for rawio
	cmd    *exec.Cmd
	ln     *net.UnixListener
	// start is the log's end when this holder began: where its output
	// (banner first) starts.
	start uint64
	// readDone is closed when the pty reader has stopped.
	readDone chan struct{}

	metaMu sync.Mutex // serializes writes of meta.json

	mu         sync.Mutex // guards the fields below
	meta       sessiondir.Meta
	closing    bool      // a Close frame arrived: the end is on purpose
	exited     bool      // child reaped and its output drained
	exitFrame  wire.Exit // valid once exited
	resizes    []resizeAt
	conn       *upstream // the current server connection, if any
	appendErrs int
	// logState is whether the log is keeping the output (see
	// outlog.Log.Stopped); logVer counts its changes, so each connection's
	// forwarder tells its server about every one.
	logState wire.LogState
	logVer   uint64
	// logStopped mirrors logState.Stopped for the pty reader, which looks
	// at it after every chunk without taking mu.
	logStopped atomic.Bool
	// relay holds the pty's reader while the server is far behind and
	// still taking output (relay.go).
	relay *relay
	// ptyMu is held from a read of the pty until its bytes are logged,
	// by readPty and by awaitEcho; echoBuf is awaitEcho's.
	ptyMu   sync.Mutex
	echoBuf [256]byte
}

// echoSpin is how long awaitEcho looks for a keystroke's echo.
const echoSpin = 200 * time.Microsecond

type resizeAt struct {
	off        uint64
	cols, rows uint16
}

func start(spec Spec) (*holder, error) {
	if len(spec.Command) == 0 {
		return nil, errors.New("holder: no command")
	}
	if spec.Cols == 0 || spec.Rows == 0 {
		spec.Cols, spec.Rows = 80, 24
	}
	if err := os.MkdirAll(spec.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("holder: create session dir: %w", err)
	}
	logf, err := os.OpenFile(filepath.Join(spec.Dir, sessiondir.LogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("holder: open holder log: %w", err)
	}
	h := &holder{
		spec: spec,
		logf: logf,
		log:  slog.New(slog.NewTextHandler(logf, nil)).With("session", spec.ID),
	}
	// RawIO: the log's writes and the forwarder's reads do not wake the Go
	// runtime's monitor thread (see internal/rawio); with the pty reads and
	// the socket writes below, a chunk of output costs the holder a third
	// of the context switches.
	opts := outlog.Options{Retention: spec.LogRetention, Cols: spec.Cols, Rows: spec.Rows, TimeEvery: logTimeEvery, RawIO: true}
	switch spec.LogSync {
	case "always":
		opts.Sync = outlog.SyncAlways
	case "never":
		opts.Sync = outlog.SyncNever
	}
	h.out, err = outlog.Open(filepath.Join(spec.Dir, sessiondir.LogDir), opts)
	if err != nil {
		return nil, err
	}
	h.relay = newRelay(h.out)
	if n := h.out.Recovered(); n > 0 {
		h.log.Warn("output log tail was torn; truncated", "bytes", n)
	}
	// A holder that ended while its log was stopped (a full disk) may not
	// have recorded the last gap; its meta.json has the true end. Offsets
	// that viewers saw are never handed out again.
	if old, err := sessiondir.ReadMeta(spec.Dir); err == nil && old.End > h.out.End() {
		if err := h.out.Skip(old.End, "not logged"); err != nil {
			h.log.Warn("record the unlogged end of the previous run", "end", old.End, "err", err)
		}
	}
	if err := h.out.SetSize(spec.Cols, spec.Rows); err != nil {
		return nil, err
	}
	h.start = h.out.End()

	// Listen before starting the child so that a server can connect the moment
	// it learns the pid.
	sock := filepath.Join(spec.Dir, sessiondir.SocketFile)
	os.Remove(sock)
	old := unix.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	unix.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("holder: listen on %s: %w", sock, err)
	}
	ln.SetUnlinkOnClose(true)
	h.ln = ln

	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	cmd.Env = spec.Env
	cmd.Dir = spec.Cwd
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: spec.Cols, Rows: spec.Rows})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("start %s: %w", spec.Command[0], err)
	}
	if p, err := pollable(ptmx); err == nil {
		ptmx = p
	}
	h.cmd, h.ptmx = cmd, ptmx
	if h.ptmxRC, err = ptmx.SyscallConn(); err != nil {
		ln.Close()
		return nil, fmt.Errorf("pty: %w", err)
	}
	// The banner goes in once the child runs (a restore that cannot start
	// leaves no line saying it did), and before the pty is first read, so
	// it precedes every byte of the child's.
	if spec.Banner != "" {
		if _, err := h.out.AppendMark([]byte(spec.Banner)); err != nil {
			h.log.Error("write banner", "err", err)
		}
	}
	// Read from the first byte on: the log stamps output with the time it
	// reads it, and writing meta.json (an fsync) takes a while.
	h.readDone = make(chan struct{})
	go func() { h.readPty(); close(h.readDone) }()
	h.meta = sessiondir.Meta{
		ID: spec.ID, Version: wire.Version, HolderPid: os.Getpid(), Pid: cmd.Process.Pid,
		Command: spec.Command, Cwd: spec.Cwd, Cols: spec.Cols, Rows: spec.Rows,
		Env: spec.KeepEnv, StartedAt: time.Now().UTC(), Name: spec.Name, Workspace: spec.Workspace,
		EnvPolicy: spec.EnvPolicy,
	}
	if err := sessiondir.WriteMeta(spec.Dir, h.meta); err != nil {
		h.log.Error("write meta", "err", err)
	}
	return h, nil
}

// run serves until the child has exited, its output is logged and the
// connected server (if any) has been told.
func (h *holder) run() int {
	// The holder has no terminal, but a stray SIGHUP or SIGINT (say, from a
	// process-group kill aimed at the server) must not end it: only the
	// child's end does. SIGTERM asks for a graceful close.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		for range term {
			h.close(5 * time.Second)
		}
	}()

	go h.acceptLoop()

	err := reap(h.cmd) // in the poller, not a thread blocked in wait (reap_linux.go)
	code, sig := exitStatus(h.cmd.ProcessState, err)
	// The child is gone; its output may still sit in the pty (or be written by
	// a process it left behind). Drain until the pty reports EIO or stays
	// quiet, so the log ends with the child's last byte.
	h.relay.childGone()
	h.drain(h.readDone)

	h.mu.Lock()
	now := time.Now().UTC()
	h.meta.EndedAt, h.meta.ExitCode, h.meta.Signal = &now, &code, sig
	h.meta.Closed = h.closing
	h.meta.End = h.out.End()
	meta := h.meta
	state := "exited"
	if h.closing {
		state = "closed"
	}
	h.exited = true
	h.exitFrame = wire.Exit{State: state, ExitCode: &code, Signal: sig, End: meta.End}
	conn := h.conn
	h.mu.Unlock()

	// The log is made durable before meta.json says the session ended, so
	// an ended session's log is always complete on disk.
	if err := h.out.Sync(); err != nil {
		h.log.Error("sync output log", "err", err)
	}
	h.metaMu.Lock()
	if err := sessiondir.WriteMeta(h.spec.Dir, meta); err != nil {
		h.log.Error("write meta", "err", err)
	}
	h.metaMu.Unlock()
	h.poke()
	// Give a connected server a moment to receive the tail and the exit.
	if conn != nil {
		select {
		case <-conn.done:
		case <-time.After(5 * time.Second):
		}
	}
	h.ln.Close()
	h.mu.Lock()
	if h.conn != nil {
		h.conn.c.Close()
	}
	h.mu.Unlock()
	if err := h.out.Close(); err != nil {
		h.log.Error("close output log", "err", err)
	}
	h.ptmx.Close()
	h.log.Info("session ended", "exit_code", code, "signal", sig, "end", meta.End)
	return 0
}

func exitStatus(ps *os.ProcessState, err error) (code, sig int) {
	if ps == nil {
		return 127, 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), int(ws.Signal())
	}
	return ps.ExitCode(), 0
}

// poke wakes the current connection's forwarder, without blocking: the log
// grew, the size changed or the session ended.
func (h *holder) poke() {
	h.mu.Lock()
	u := h.conn
	h.mu.Unlock()
	if u != nil {
		select {
		case u.notify <- struct{}{}:
		default:
		}
	}
}

// readPty copies the pty into the log until the pty fails (EIO once every
// writer of the slave side is gone, or the deadline set by drain).
func (h *holder) readPty() {
	buf := make([]byte, 64<<10)
	for {
		h.relay.wait()
		h.ptyMu.Lock()
		n, err := rawio.ReadHolding(h.ptmxRC, buf, &h.ptyMu) // lets go of ptyMu while it waits
		if n > 0 {
			h.logOutput(buf[:n])
		}
		h.ptyMu.Unlock()
		if err != nil {
			return // EIO: no process holds the pty any more; or drain's deadline
		}
	}
}

// logOutput logs a chunk read from the pty and wakes the forwarder. The caller
// holds ptyMu from the read on, so chunks are logged in the order read.
func (h *holder) logOutput(p []byte) {
	_, aerr := h.out.Append(p)
	if errors.Is(aerr, outlog.ErrStopped) || h.logStopped.Load() {
		// The bytes have their offsets and reach the server from
		// memory; the log retries by itself.
		h.checkLog()
	} else if aerr != nil {
		// The log is the source of truth; without it we cannot keep
		// the promise, but the child must not block: keep reading so
		// it runs on, and say so once.
		h.mu.Lock()
		h.appendErrs++
		first := h.appendErrs == 1
		h.mu.Unlock()
		if first {
			h.log.Error("append to output log failed; output is being lost", "err", aerr)
		}
	}
	h.poke()
}

// awaitEcho is what the holder does right after it wrote a keystroke to the
// pty, when no more input is waiting: rather than sleep until the pty's echo
// wakes it (on a virtual machine, waking an idle process costs tens of
// microseconds, each hop of the echo's path once), it looks for the echo for
// up to echoSpin, yielding the CPU between looks, and forwards it at once.
// Output that takes longer is read by readPty as always. Once the child
// has exited it does nothing: what the pty still gives then is drain's.
func (h *holder) awaitEcho() {
	if h.relay.free.Load() {
		return
	}
	deadline := time.Now().Add(echoSpin)
	for time.Now().Before(deadline) {
		if h.ptyMu.TryLock() {
			n, err := rawio.TryRead(h.ptmxRC, h.echoBuf[:])
			if n > 0 {
				h.logOutput(h.echoBuf[:n])
			}
			h.ptyMu.Unlock()
			if n > 0 || err != syscall.EAGAIN {
				return
			}
		}
		rawio.Yield()
	}
}

// checkLog notes a change in whether the log is logging, says it in the
// holder's log, and wakes the forwarder to tell the server. While the log
// is stopped, a goroutine retries it every second, so that a quiet session
// resumes logging too.
func (h *holder) checkLog() {
	st := h.out.Stopped()
	h.mu.Lock()
	if (st != nil) == h.logState.Stopped {
		h.mu.Unlock()
		return
	}
	h.logState = wire.LogState{Stopped: st != nil}
	h.logStopped.Store(st != nil)
	if st != nil {
		h.logState.At, h.logState.Reason = st.At, st.Reason
	}
	h.logVer++
	h.mu.Unlock()
	if st != nil {
		h.log.Error("output log stopped; the session runs on and its output still reaches viewers, but is not saved until the log can write again",
			"at", st.At, "reason", st.Reason, "err", st.Err)
		go h.retryLog()
	} else {
		h.log.Info("output log resumed; the output in between is recorded as a gap", "end", h.out.End())
	}
	h.poke()
}

func (h *holder) retryLog() {
	for {
		time.Sleep(time.Second)
		if err := h.out.Retry(); errors.Is(err, outlog.ErrClosed) {
			return
		}
		h.checkLog()
		if !h.logStopped.Load() {
			return
		}
	}
}

// drain waits for the pty reader after the child exited: it returns when the
// reader stops on its own (EIO: no process holds the pty any more) or when the
// pty has been quiet for a moment (a background process the child left behind
// still holds it open).
func (h *holder) drain(readDone <-chan struct{}) {
	end := h.out.End()
	// A process the child left behind may write for ever; its output after
	// this bound is not the child's, and closing the pty hangs it up.
	limit := time.Now().Add(2 * time.Second)
	for time.Now().Before(limit) {
		select {
		case <-readDone:
			return
		case <-time.After(200 * time.Millisecond):
		}
		if e := h.out.End(); e != end {
			end = e
			continue
		}
		break
	}
	// Quiet, or drained long enough: stop the reader.
	h.ptmx.SetReadDeadline(time.Now())
	select {
	case <-readDone:
	case <-time.After(time.Second):
	}
}

// close ends the session on purpose: SIGHUP to the child's process group
// (and the pty's foreground group), then SIGKILL after grace.
func (h *holder) close(grace time.Duration) {
	h.mu.Lock()
	if h.exited {
		h.mu.Unlock()
		return
	}
	already := h.closing
	h.closing = true
	h.mu.Unlock()
	if already {
		return
	}
	h.signalChild(syscall.SIGHUP)
	go func() {
		time.Sleep(grace)
		h.mu.Lock()
		exited := h.exited
		h.mu.Unlock()
		if !exited {
			h.signalChild(syscall.SIGKILL)
		}
	}()
}

// signalChild sends sig to the pty's foreground process group and to the
// child's own group; the child is a session leader, so its pid is its group.
func (h *holder) signalChild(sig syscall.Signal) {
	pid := h.cmd.Process.Pid
	if fg, err := foreground(h.ptmx); err == nil && fg > 0 && fg != pid {
		syscall.Kill(-fg, sig)
	}
	if err := syscall.Kill(-pid, sig); err != nil {
		syscall.Kill(pid, sig)
	}
}

func (h *holder) resize(cols, rows uint16) {
	if err := setWinsize(h.ptmx, cols, rows); err != nil {
		h.log.Warn("resize pty", "err", err)
		return
	}
	h.mu.Lock()
	if h.meta.Cols == cols && h.meta.Rows == rows {
		h.mu.Unlock()
		return
	}
	h.meta.Cols, h.meta.Rows = cols, rows
	if err := h.out.SetSize(cols, rows); err != nil {
		h.log.Warn("log size", "err", err)
	}
	h.resizes = append(h.resizes, resizeAt{off: h.out.End(), cols: cols, rows: rows})
	if len(h.resizes) > 64 {
		h.resizes = h.resizes[len(h.resizes)-64:]
	}
	h.mu.Unlock()
	h.poke()
	h.saveMeta()
}

// setCwd records the session's working directory (the server follows it
// from OSC 7 and the child's /proc entry) in meta.json, where a restore
// finds it.
func (h *holder) setCwd(dir string) {
	h.mu.Lock()
	if h.meta.Cwd == dir || h.exited {
		h.mu.Unlock()
		return
	}
	h.meta.Cwd = dir
	h.mu.Unlock()
	go h.saveMeta()
}

// saveMeta writes the current meta.json. Writers are serialized: they share
// the temporary file.
func (h *holder) saveMeta() {
	h.metaMu.Lock()
	defer h.metaMu.Unlock()
	h.mu.Lock()
	meta := h.meta
	h.mu.Unlock()
	if err := sessiondir.WriteMeta(h.spec.Dir, meta); err != nil {
		h.log.Warn("write meta", "err", err)
	}
}

// acceptLoop serves upstream connections one at a time. A new connection
// replaces the current one: the newest server is the live one (the old one
// crashed, or is being upgraded and handing over).
func (h *holder) acceptLoop() {
	var delay time.Duration
	for {
		c, err := h.ln.AcceptUnix()
		if err != nil {
			if retryAccept(err, &delay) { // accept.go
				continue
			}
			return
		}
		delay = 0
		if !samePeer(c) {
			c.Close()
			continue
		}
		u := &upstream{h: h, c: c, done: make(chan struct{}), gone: make(chan struct{}), notify: make(chan struct{}, 1)}
		go u.serve()
	}
}

// samePeer reports whether the peer of c runs as our uid.
func samePeer(c *net.UnixConn) bool {
	uid, err := peercred.UID(c)
	return err == nil && uid == os.Getuid()
}

// upstream is one server connection.
type upstream struct {
	h      *holder
	c      *net.UnixConn
	done   chan struct{} // closed when the forwarder has sent Exit or the conn died
	gone   chan struct{} // closed when the reader has stopped: the conn is dead
	notify chan struct{} // one slot: wakes the forwarder
	wmu    sync.Mutex    // serialises frames written by the reader (pong, errors) and the forwarder
	w      *wire.Writer
	// version is the protocol version agreed with the server (set before
	// the forwarder starts).
	version int
}

func (u *upstream) send(fn func(w *wire.Writer) error) error {
	u.wmu.Lock()
	defer u.wmu.Unlock()
	return fn(u.w)
}

func (u *upstream) serve() {
	h := u.h
	defer func() {
		u.c.Close()
		close(u.gone)
		h.mu.Lock()
		if h.conn == u {
			h.conn = nil
		}
		h.mu.Unlock()
	}()
	rc, err := u.c.SyscallConn()
	if err != nil {
		close(u.done)
		return
	}
	u.w = wire.NewWriter(rawio.NewReadWriter(rc))
	var buf []byte
	u.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// One read per burst of frames rather than two per frame (header, then
	// payload): keystrokes arrive here one frame at a time.
	br := bufio.NewReaderSize(rawio.NewReadWriter(rc), 16<<10)
	f, err := wire.ReadFrame(br, &buf)
	if err != nil || f.Type != wire.TypeHello {
		u.fail(wire.CodeMalformed, "expected a hello frame")
		close(u.done)
		return
	}
	var hello wire.Hello
	if err := wire.ParseJSON(f.Payload, &hello); err != nil {
		u.fail(wire.CodeMalformed, err.Error())
		close(u.done)
		return
	}
	if hello.Version < wire.MinVersion {
		u.fail(wire.CodeVersion, fmt.Sprintf("protocol version %d is too old; this holder speaks %d..%d", hello.Version, wire.MinVersion, wire.Version))
		close(u.done)
		return
	}
	u.c.SetReadDeadline(time.Time{})

	// A valid hello makes this the live connection; the one before it is
	// from a server that died or is handing over.
	h.mu.Lock()
	old := h.conn
	h.conn = u
	h.mu.Unlock()
	if old != nil {
		old.c.Close()
	}

	first, end := h.out.First(), h.out.End()
	from := end
	if hello.From >= 0 {
		from = uint64(hello.From)
	}
	if from > end {
		u.fail(wire.CodeUnavailable, fmt.Sprintf("offset %d is beyond the end of the log (%d)", from, end))
		close(u.done)
		return
	}
	u.version = min(hello.Version, wire.Version)
	h.mu.Lock()
	welcome := wire.Welcome{
		Version: u.version, Session: h.spec.ID, Pid: h.meta.Pid,
		First: first, End: end, Start: max(from, first), Cols: h.meta.Cols, Rows: h.meta.Rows,
		Exited: h.exited,
	}
	h.mu.Unlock()
	if err := u.send(func(w *wire.Writer) error { return w.JSON(wire.TypeWelcome, welcome) }); err != nil {
		close(u.done)
		return
	}

	go u.forward(from)
	for {
		f, err := wire.ReadFrame(br, &buf)
		if err != nil {
			if errors.Is(err, wire.ErrMalformed) {
				u.fail(wire.CodeMalformed, err.Error())
			}
			return
		}
		if err := wire.Validate(f); err != nil {
			u.fail(wire.CodeMalformed, err.Error())
			return
		}
		switch f.Type {
		case wire.TypeInput:
			if _, err := rawio.Write(h.ptmxRC, f.Payload); err != nil {
				h.log.Warn("write input", "err", err)
			} else if br.Buffered() == 0 {
				h.awaitEcho()
			}
		case wire.TypeResize:
			cols, rows, _ := wire.ParseResize(f.Payload)
			h.resize(cols, rows)
		case wire.TypeSignal:
			sig, _ := wire.ParseSignal(f.Payload)
			h.signalChild(syscall.Signal(sig))
		case wire.TypeClose:
			ms, _ := wire.ParseClose(f.Payload)
			h.close(time.Duration(ms) * time.Millisecond)
		case wire.TypePing:
			v, _ := wire.ParseUint64(f.Type, f.Payload)
			u.send(func(w *wire.Writer) error { return w.Uint64(wire.TypePong, v) })
		case wire.TypeCwd:
			h.setCwd(string(f.Payload))
		case wire.TypeName:
			h.setName(string(f.Payload)) // name.go
		case wire.TypeAck:
		default:
			u.fail(wire.CodeMalformed, fmt.Sprintf("a holder does not accept %s frames", f.Type))
			return
		}
	}
}

func (u *upstream) fail(code uint16, msg string) {
	u.send(func(w *wire.Writer) error { return w.Error(code, msg) })
	u.c.Close()
}

// forward streams the log from offset from to the server, following its end,
// and finishes with an Exit frame once the child has ended.
func (u *upstream) forward(from uint64) {
	defer close(u.done)
	h := u.h
	cur := h.out.Cursor(from)
	defer cur.Close()
	// The server's viewers may be up to the log's retention behind what
	// the server has taken: keep those bytes while it drains a burst, and
	// pace the pty's reader by it (relay.go). (A replaced connection's
	// Release may briefly undo its successor's Hold, which the successor's
	// next frame restores.)
	h.relay.sent(from, time.Now())
	defer h.out.Release()
	// Frames are read from the log straight into place behind their
	// header (no copy), in a buffer whose pages a burst touched go back
	// once the stream has caught up (framebuf.go). It holds at least
	// outlog.ReadBuffer, so the cursor checks each record's checksum
	// before it returns a byte of it.
	fb := newFrameBuffer()
	defer fb.close()
	frame := fb.b
	buf := frame[wire.OutputHeaderSize:]
	var logSent uint64
	for {
		off := cur.Offset()
		// Never send bytes past a pending resize: the Resized frame must sit
		// at its offset in the stream.
		limit := len(buf)
		h.mu.Lock()
		for len(h.resizes) > 0 && h.resizes[0].off < off {
			h.resizes = h.resizes[1:]
		}
		var pending *resizeAt
		if len(h.resizes) > 0 {
			r := h.resizes[0]
			if r.off == off {
				pending = &r
				h.resizes = h.resizes[1:]
			} else if d := r.off - off; d < uint64(limit) {
				limit = int(d)
			}
		}
		exited, exitFrame := h.exited, h.exitFrame
		logVer, logState := h.logVer, h.logState
		h.mu.Unlock()
		if logVer != logSent && u.version >= 2 {
			logSent = logVer
			if u.send(func(w *wire.Writer) error { return w.JSON(wire.TypeLog, logState) }) != nil {
				return
			}
		}
		if pending != nil {
			if u.send(func(w *wire.Writer) error { return w.Resized(pending.off, pending.cols, pending.rows) }) != nil {
				return
			}
			continue
		}

		n, err := cur.Read(buf[:limit])
		var gap *outlog.GapError
		switch {
		case n > 0:
			fb.used(wire.OutputHeaderSize + n)
			if u.send(func(w *wire.Writer) error { return w.OutputInPlace(off, frame[:wire.OutputHeaderSize+n]) }) != nil {
				return
			}
			h.relay.sent(off+uint64(n), time.Now())
		case errors.Is(err, outlog.ErrCompacted):
			first := h.out.First()
			if u.send(func(w *wire.Writer) error { return w.Gap(off, first) }) != nil {
				return
			}
			cur.Seek(first)
		case errors.As(err, &gap):
			// Bytes that went by while the log was stopped and are no
			// longer kept in memory; the cursor is past them.
			if u.send(func(w *wire.Writer) error { return w.Gap(gap.Start, gap.End) }) != nil {
				return
			}
		case errors.Is(err, outlog.ErrCorrupt):
			next := max(h.out.SkipCorrupt(off), off+1)
			h.log.Error("output log is damaged; skipping", "from", off, "to", next, "err", err)
			if u.send(func(w *wire.Writer) error { return w.Gap(off, next) }) != nil {
				return
			}
			cur.Seek(next)
		case err == io.EOF || err == nil:
			if exited && off >= exitFrame.End {
				u.send(func(w *wire.Writer) error { return w.JSON(wire.TypeExit, exitFrame) })
				return
			}
			fb.release()
			select {
			case <-u.notify:
			case <-u.gone:
				return
			case <-time.After(time.Second):
				// A safety net: a missed poke must never stall a stream.
			}
		default:
			h.log.Error("read output log", "err", err)
			u.send(func(w *wire.Writer) error { return w.Error(wire.CodeInternal, "read output log: "+err.Error()) })
			return
		}
	}
}
