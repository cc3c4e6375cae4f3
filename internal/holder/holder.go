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
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"termkeep/internal/bootid"
	"termkeep/internal/outlog"
	"termkeep/internal/rawio"
	"termkeep/internal/sessiondir"
	"termkeep/internal/termq"
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
	// Settings are the session's settings in the registry, kept in
	// meta.json for the same reason.
	Settings sessiondir.Settings `json:"settings"`

	// Banner is written into the log, as termkeep's own bytes (a mark
	// record), before the child starts: a restore's line between the old
	// screen and the new process.
	Banner string `json:"banner,omitempty"`

	// Linger is how long the holder keeps reading the pty after the child
	// exited while processes it left behind still hold the terminal (a
	// job that ignores SIGHUP), to log what they print; 0 reads only
	// what is already there (at most 2 s while output flows), as holders
	// before it did.
	Linger time.Duration `json:"linger,omitempty"`

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
	sigs := holdSignals()
	h, err := start(spec, nil)
	if err != nil {
		json.NewEncoder(os.Stdout).Encode(Ready{Error: err.Error()})
		return 1
	}
	json.NewEncoder(os.Stdout).Encode(Ready{Pid: h.cmd.Process.Pid, HolderPid: os.Getpid(), Start: h.start})
	detachStdio(h.logf)
	return h.run(sigs)
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
	lock   *os.File // holder.lock, flocked while this holder lives (lock.go)
	out    *outlog.Log
	ptmx   *os.File
	ptmxRC syscall.RawConn // ptmx's descriptor, for rawio
	// ptmxR and ptmxW read and write ptmx without allocating: once per
	// chunk of output and per key, a holder leaves no garbage.
	ptmxR    *rawio.Reader
	ptmxW    *rawio.Writer
	ptmxMode *modeReader // termmode.go
	cmd      *exec.Cmd
	ln       *net.UnixListener
	// start is the log's end when this holder began: where its output
	// (banner first) starts.
	start uint64
	// readDone is closed when the pty reader has stopped.
	readDone chan struct{}

	metaMu sync.Mutex // serializes writes of meta.json and the status record
	// disk is what meta.json and the status record are written through
	// (nil: the files themselves; tests: a full disk).
	disk sessiondir.Through
	// status is the status record, overwritten in place (nil: it could
	// not be made when the holder started). Guarded by metaMu.
	status *sessiondir.StatusWriter
	// ptsDev is the device number of the pty's terminal side: the
	// processes that still hold it are the session's (ptyprocs.go).
	ptsDev uint64
	// sigMu is held while the pty's processes are found and signalled,
	// and while ptmx is closed: the pty's number is free for another
	// session's pty once ptmx is closed, so nothing is signalled by it
	// after that (ptyClosed).
	sigMu     sync.Mutex
	ptyClosed bool

	// stopped is closed at the holder's first SIGTERM (stopAt), and
	// closeBegun when a close on purpose begins (closing): either decides
	// how a child that already died of a stop's signal ended (judgeEnd).
	stopped    chan struct{}
	closeBegun chan struct{}

	mu         sync.Mutex // guards the fields below
	meta       sessiondir.Meta
	closing    bool      // a Close frame or CloseSignal arrived: the end is on purpose
	stopAt     time.Time // when SIGTERM arrived: the machine or service stopping; zero: not
	hungUp     bool      // the child has been sent SIGHUP by close or stop
	hungUpAt   time.Time // when, and with what grace before SIGKILL
	grace      time.Duration
	reaped     bool         // the child has been reaped: its pid may be reused
	exited     bool         // child reaped, its output drained and its end decided
	exitFrame  wire.Exit    // valid once exited
	linger     *wire.Linger // set while the child has exited and the holder reads on
	resizes    []resizeAt
	conn       *upstream              // the current server connection, if any
	ups        map[*upstream]struct{} // every connection being served
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
	// lane and laneFile are the output lane (lane.go), guarded by ptyMu;
	// laneDisabled is TERMKEEP_ECHO_LANE=off, laneInputOff =output, read
	// at start.
	lane         lane
	laneFile     laneFile
	questions    termq.Scanner // every chunk's, for the lane (lane.chunk's asks)
	laneDisabled bool
	laneInputOff bool
	// spin decides whether awaitEcho looks (echospin.go); spinMu guards
	// it (an old and a new server connection may both be writing input).
	spinMu sync.Mutex
	spin   spinPolicy
}

type resizeAt struct {
	off        uint64
	cols, rows uint16
}

// start starts the session of spec; its meta.json and status record are
// written through disk (nil: the files themselves).
func start(spec Spec, disk sessiondir.Through) (*holder, error) {
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
		spec:       spec,
		disk:       disk,
		logf:       logf,
		stopped:    make(chan struct{}),
		closeBegun: make(chan struct{}),
		log:        slog.New(slog.NewTextHandler(logf, nil)).With("session", spec.ID),
		// Read from the holder's own environment, not the child's.
		laneDisabled: os.Getenv(laneEnv) == "off",
		laneInputOff: os.Getenv(laneEnv) == laneInputOff,
	}
	if h.lock, err = lockDir(spec.Dir); err != nil {
		h.log.Error("not started", "err", err)
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			h.lock.Close()
		}
	}()
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
	h.ptsDev = ptsDevice(ptmx)
	if h.ptmxRC, err = ptmx.SyscallConn(); err != nil {
		ln.Close()
		return nil, fmt.Errorf("pty: %w", err)
	}
	h.ptmxR, h.ptmxW, h.ptmxMode = rawio.NewReader(h.ptmxRC), rawio.NewWriter(h.ptmxRC), newModeReader(h.ptmxRC)
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
		EnvPolicy: spec.EnvPolicy, Settings: spec.Settings, Linger: spec.Linger.String(),
	}
	if id, err := bootid.Current(); err == nil {
		h.meta.BootID = id
	} else {
		h.log.Warn("the machine's boot is not known; a restart of the machine will not be told from a holder's death", "err", err)
	}
	if err := sessiondir.WriteMetaThrough(spec.Dir, h.meta, h.disk); err != nil {
		h.log.Error("write meta", "err", err)
	}
	// Made now, while there is room: the end overwrites it in place.
	if h.status, err = sessiondir.CreateStatus(spec.Dir, sessiondir.StatusOf(h.meta), h.disk); err != nil {
		h.log.Warn("make the status record; a full disk at the end may leave the exit status unrecorded", "err", err)
	}
	started = true
	return h, nil
}
