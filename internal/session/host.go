// Package session is the server's side of one session: the connection to
// its holder, the fan-out of its output to any number of viewers, and what
// the server knows of its state.
//
// Fan-out never waits for a viewer. The host keeps the session's end offset
// and a small window of recent output in memory; each viewer is a goroutine
// with its own position that copies from that window, or from the output log
// on disk when it has fallen behind the window. A slow viewer therefore costs
// only its own position: it cannot slow the child, the holder or another
// viewer, and when it catches up it is live again. Output the log's retention
// has dropped is reported to the viewer as a gap.
package session

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/rawio"
	"termkeep/internal/session/sizepolicy"
	"termkeep/internal/session/window"
	"termkeep/internal/sessiondir"
	"termkeep/internal/termq"
	"termkeep/internal/wire"
)

// Host is one session as the server sees it. Its methods are safe for
// concurrent use.
type Host struct {
	ID  string
	dir string
	log *slog.Logger
	// onEnd is called once, from the host's own goroutine, when the session
	// ends (exited, closed or interrupted).
	onEnd func(wire.Exit)

	olog     *outlog.Log // read-only view of the output log, for viewers behind the window
	ologOnce sync.Once
	ologErr  error

	mu      sync.Mutex     // guards the fields below
	end     uint64         // offset after the last byte received
	win     *window.Window // recent output, ending at end (or before it, once ended)
	changed chan struct{}
	cols    uint16
	rows    uint16
	pid     int
	exit    *wire.Exit    // set once the session has ended
	up      *holderConn   // nil while disconnected
	ended   chan struct{} // closed when exit is set
	closing bool          // a Close was sent: the end is on purpose

	// For the server's policies (activity.go), also guarded by mu.
	closeReason string   // why, when the server closed it on its own (SetCloseReason)
	usage       activity // use and viewers

	viewers     map[*viewer]struct{}
	viewerSeq   int
	viewersVer  uint64        // bumped when viewers come and go or the size changes
	logState    wire.LogState // whether the holder is logging (wire.TypeLog)
	logVer      uint64        // bumped when logState changes
	sizeOwner   int           // the id of the viewer whose size the session follows (0: none)
	policy      sizepolicy.Policy
	sizeViewers []sizepolicy.Viewer // sizeViewersLocked's buffer
	resyncs     atomic.Uint64       // viewers skipped to the present with a snapshot

	meter      *Meter        // the server's totals (meter.go); never nil
	inBytes    atomic.Uint64 // input written to the holder
	reconnects atomic.Uint64 // holder connections made again after a drop

	reqCols, reqRows uint16 // the size last asked of the holder (0: none yet)

	cwdT  cwdTracker       // guarded by mu
	onCwd func(dir string) // called when the working directory changes

	answerOnce sync.Once
	answerQ    chan termq.Question // questions the model answers, in order

	questions    termq.Arbiter // terminal questions awaiting their one answer; guarded by mu
	inputMu      sync.Mutex    // orders viewers' input: an accepted answer is written before the next is judged
	questionScan termq.Scanner // finds questions in the output; readHolder's goroutine only

	modelOnce sync.Once
	model     *model        // the screen model, once started
	closed    chan struct{} // closed by Close
	closeOnce sync.Once
}

// Config is what a Host needs to reach its holder.
type Config struct {
	ID  string
	Dir string // the session directory
	Log *slog.Logger
	// OnEnd is called once when the session ends.
	OnEnd func(wire.Exit)
	// OnCwd is called when the session's working directory changes.
	OnCwd func(dir string)
	// Meter, when set, is added to as the host carries bytes and resyncs
	// viewers (meter.go); hosts may share one.
	Meter *Meter
}

// ErrEnded is returned by operations on a session that has ended.
var ErrEnded = errors.New("session: session has ended")

// ErrDisconnected is returned when the holder is not connected right now.
var ErrDisconnected = errors.New("session: the session's holder is not connected")

// New returns a Host; call Connect to reach the holder.
func New(cfg Config) *Host {
	lg := cfg.Log
	if lg == nil {
		lg = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	meter := cfg.Meter
	if meter == nil {
		meter = new(Meter)
	}
	return &Host{
		ID: cfg.ID, dir: cfg.Dir, log: lg.With("session", cfg.ID), onEnd: cfg.OnEnd, onCwd: cfg.OnCwd, meter: meter,
		win:     window.New(recentCap),
		changed: make(chan struct{}), ended: make(chan struct{}), closed: make(chan struct{}),
		usage: newActivity(time.Now()),
	}
}

// Ended returns a channel closed once the session has ended.
func (h *Host) Ended() <-chan struct{} { return h.ended }

// Exit returns how the session ended, or nil while it runs.
func (h *Host) Exit() *wire.Exit {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.exit
}

// Info is a point-in-time view of the host.
type Info struct {
	End        uint64
	Cols, Rows uint16
	Pid        int
	Connected  bool
	// LogStopped is set while the holder cannot log the output.
	LogStopped *wire.LogState
}

// Info returns the host's current view.
func (h *Host) Info() Info {
	h.mu.Lock()
	defer h.mu.Unlock()
	info := Info{End: h.end, Cols: h.cols, Rows: h.rows, Pid: h.pid, Connected: h.up != nil}
	if h.logState.Stopped && h.exit == nil {
		st := h.logState
		info.LogStopped = &st
	}
	return info
}

// outlog opens the read-only log view lazily.
func (h *Host) outlog() (*outlog.Log, error) {
	h.ologOnce.Do(func() {
		h.olog, h.ologErr = outlog.Open(filepath.Join(h.dir, sessiondir.LogDir), outlog.Options{ReadOnly: true})
	})
	return h.olog, h.ologErr
}

// Close releases the host's files, writing a last screen checkpoint so the
// next server starts from it. It does not end the session.
func (h *Host) Close() {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		up := h.up
		h.mu.Unlock()
		if up != nil {
			up.c.Close()
		}
		close(h.closed)
		h.mu.Lock()
		m := h.model
		h.mu.Unlock()
		if m != nil {
			m.checkpoint(true)
			m.stop()
		}
		if l, err := h.outlog(); err == nil && l != nil {
			l.Close()
		}
	})
}

// Connect dials the holder and resumes its stream from offset from (-1: the
// end of the log on disk). It returns once the holder has welcomed the
// server; the stream is then read in the background, and a dropped
// connection is retried until the holder is found gone, at which point the
// session ends as exited (status on disk) or interrupted.
func (h *Host) Connect(from int64) error { return h.connect(from, false) }

// connect is Connect; again says it follows a dropped connection, for the
// log line and the count.
func (h *Host) connect(from int64, again bool) error {
	// The model starts before the holder is dialed, so every live size
	// change reaches it.
	h.startModel()
	if from < 0 {
		l, err := h.outlog()
		if err != nil {
			return err
		}
		if err := l.Refresh(); err != nil {
			return err
		}
		from = int64(l.End())
	}
	up, welcome, err := dialHolder(h.dir, from)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.up = up
	h.end = uint64(from)
	h.win.Reset(h.end)
	h.cols, h.rows, h.pid = welcome.Cols, welcome.Rows, welcome.Pid
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
	if again {
		h.reconnects.Add(1)
		h.meter.Reconnects.Add(1)
		h.log.Info("holder reconnected", "pid", welcome.Pid, "offset", from)
	} else {
		h.log.Info("holder connected", "pid", welcome.Pid, "offset", from)
	}
	go h.readHolder(up)
	return nil
}

// holderConn is the connection to the holder.
type holderConn struct {
	c   net.Conn
	wmu sync.Mutex
	w   *wire.Writer
}

func (u *holderConn) send(fn func(*wire.Writer) error) error {
	u.wmu.Lock()
	defer u.wmu.Unlock()
	return fn(u.w)
}

func dialHolder(dir string, from int64) (*holderConn, wire.Welcome, error) {
	var welcome wire.Welcome
	sock := filepath.Join(dir, sessiondir.SocketFile)
	c, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		return nil, welcome, fmt.Errorf("session: dial holder: %w", err)
	}
	// Input goes out as a raw write, as output comes in (newFrameReader): an
	// ordinary system call after the server was idle wakes the runtime's
	// monitor thread (internal/rawio), once per keystroke.
	up := &holderConn{c: c, w: wire.NewWriter(rawio.NewConn(c))}
	if err := up.w.JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: wire.RoleServer, From: from}); err != nil {
		c.Close()
		return nil, welcome, fmt.Errorf("session: hello to holder: %w", err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var buf []byte
	f, err := wire.ReadFrame(c, &buf)
	if err != nil {
		c.Close()
		return nil, welcome, fmt.Errorf("session: read holder welcome: %w", err)
	}
	switch f.Type {
	case wire.TypeWelcome:
		if err := wire.ParseJSON(f.Payload, &welcome); err != nil {
			c.Close()
			return nil, welcome, fmt.Errorf("session: holder welcome: %w", err)
		}
	case wire.TypeError:
		_, msg, _ := wire.ParseError(f.Payload)
		c.Close()
		return nil, welcome, fmt.Errorf("session: holder refused: %s", msg)
	default:
		c.Close()
		return nil, welcome, fmt.Errorf("session: holder answered hello with %s", f.Type)
	}
	c.SetReadDeadline(time.Time{})
	return up, welcome, nil
}

// readHolder consumes the holder's stream until it ends, then decides
// whether to reconnect or to record the end.
func (h *Host) readHolder(up *holderConn) {
	r := newFrameReader(up.c)
	var buf []byte // reused, unless the window kept an output frame's bytes
	for {
		f, err := wire.ReadFrame(r, &buf)
		if err != nil {
			break
		}
		if err := wire.Validate(f); err != nil {
			h.log.Error("bad frame from holder", "err", err)
			break
		}
		switch f.Type {
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(f.Payload)
			kept := h.appendOutput(off, data)
			h.questionScan.Scan(data, off, h.asked)
			h.maybeCheckCwd()
			if kept {
				buf = nil
			}
		case wire.TypeResized:
			off, cols, rows, _ := wire.ParseResized(f.Payload)
			h.mu.Lock()
			h.cols, h.rows = cols, rows
			h.viewersChangedLocked()
			m := h.model
			h.mu.Unlock()
			if m != nil {
				m.addSize(outlog.SizeChange{Offset: off, Cols: cols, Rows: rows})
			}
		case wire.TypeGap:
			_, to, _ := wire.ParseGap(f.Payload)
			h.mu.Lock()
			if to > h.end {
				h.end = to
				h.win.Reset(to)
			}
			h.mu.Unlock()
		case wire.TypeExit:
			var e wire.Exit
			wire.ParseJSON(f.Payload, &e)
			h.mu.Lock()
			if h.closing && e.State == "exited" {
				e.State = "closed"
			}
			if e.State == "closed" && e.Reason == "" {
				e.Reason = cmp.Or(h.closeReason, "the session was closed (termkeep kill, or closed in the browser)")
			}
			h.mu.Unlock()
			up.c.Close()
			h.finish(e)
			return
		case wire.TypeLog:
			var st wire.LogState
			wire.ParseJSON(f.Payload, &st)
			h.mu.Lock()
			if st != h.logState {
				h.logState = st
				h.logVer++
				close(h.changed)
				h.changed = make(chan struct{})
			}
			h.mu.Unlock()
			if st.Stopped {
				h.log.Error("the session's output log stopped; output still reaches viewers but is not saved", "at", st.At, "reason", st.Reason)
			} else {
				h.log.Info("the session's output log resumed")
			}
		case wire.TypeError:
			_, msg, _ := wire.ParseError(f.Payload)
			h.log.Warn("holder reported an error", "msg", msg)
		case wire.TypePong:
		}
	}
	up.c.Close()
	h.mu.Lock()
	if h.up == up {
		h.up = nil
	}
	h.mu.Unlock()
	h.reconnect()
}

func newFrameReader(c net.Conn) io.Reader {
	b := &bufferedConn{c: c}
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			b.rc = rc
		}
	}
	return b
}

// frameReadSize is a frame reader's buffer.
const frameReadSize = 64 << 10

// frameReadBufs are the frame readers' buffers. A reader takes one when
// its socket has bytes and gives it back once it has handed them all on,
// so the reader of an idle session, which waits for its holder most of
// the time, holds none.
var frameReadBufs = sync.Pool{New: func() any {
	b := make([]byte, frameReadSize)
	return &b
}}

// bufferedConn is a minimal read buffer: frames from a socket arrive in
// large writes, and reading a 5-byte header with its own syscall would cost
// more than the copy.
type bufferedConn struct {
	c    net.Conn
	rc   syscall.RawConn // c's descriptor; nil when it has none, and then buf is kept
	buf  *[]byte         // nil while nothing is buffered (with rc)
	r, w int
}

func (b *bufferedConn) get() []byte {
	b.buf = frameReadBufs.Get().(*[]byte)
	return *b.buf
}

func (b *bufferedConn) put([]byte) {
	frameReadBufs.Put(b.buf)
	b.buf = nil
}

func (b *bufferedConn) Read(p []byte) (int, error) {
	if b.r == b.w {
		if len(p) >= frameReadSize {
			return b.c.Read(p)
		}
		var n int
		var err error
		if b.rc != nil {
			_, n, err = rawio.ReadLazy(b.rc, b.get, b.put)
		} else {
			if b.buf == nil {
				buf := make([]byte, frameReadSize)
				b.buf = &buf
			}
			n, err = b.c.Read(*b.buf)
		}
		if n == 0 {
			return 0, err
		}
		b.r, b.w = 0, n
	}
	n := copy(p, (*b.buf)[b.r:b.w])
	b.r += n
	if b.r == b.w && b.rc != nil {
		b.put(nil)
		b.r, b.w = 0, 0
	}
	return n, nil
}

// reconnect retries the holder for a while after a dropped connection. A
// holder whose process is gone ends the session.
func (h *Host) reconnect() {
	delay := 50 * time.Millisecond
	for attempt := 0; attempt < 20; attempt++ {
		if m, err := sessiondir.ReadMeta(h.dir); err == nil && m.EndedAt != nil {
			h.finish(exitFromMeta(m))
			return
		}
		if outOfFiles() { // rlimit.go: nothing tells whether the holder is gone
			attempt = 0
		} else if !h.holderAlive() {
			break
		} else if err := h.connect(-1, true); err == nil {
			return
		}
		time.Sleep(delay)
		delay = min(delay*2, time.Second)
	}
	// One last look: the holder may have written its exit while we retried.
	if m, err := sessiondir.ReadMeta(h.dir); err == nil && m.EndedAt != nil {
		h.finish(exitFromMeta(m))
		return
	}
	h.finish(h.interrupted())
}

// interrupted describes a session whose holder died without recording an
// exit: no status is known.
func (h *Host) interrupted() wire.Exit {
	var end uint64
	if l, err := h.outlog(); err == nil {
		l.Refresh()
		end = l.End()
	}
	pid := 0
	if m, err := sessiondir.ReadMeta(h.dir); err == nil {
		pid = m.HolderPid
	}
	return wire.Exit{
		State: "interrupted", End: end,
		Reason: fmt.Sprintf("its holder process (pid %d) died without recording an exit status; output up to byte %d is kept", pid, end),
	}
}

// holderAlive reports whether the holder process recorded in meta.json runs.
func (h *Host) holderAlive() bool {
	m, err := sessiondir.ReadMeta(h.dir)
	if err != nil || m.HolderPid <= 0 {
		return false
	}
	return processAlive(m.HolderPid)
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func exitFromMeta(m sessiondir.Meta) wire.Exit {
	e := wire.Exit{State: "exited", ExitCode: m.ExitCode, Signal: m.Signal, End: m.End}
	if m.Closed {
		e.State = "closed"
	}
	return e
}

// Resolve decides how a session the server finds on disk stands, without a
// live connection: ended (from meta.json) or interrupted. It is used when the
// holder cannot be reached at start.
func (h *Host) Resolve() wire.Exit {
	if m, err := sessiondir.ReadMeta(h.dir); err == nil && m.EndedAt != nil {
		return exitFromMeta(m)
	}
	return h.interrupted()
}

// MarkEnded records an end the server decided on (e.g. a session whose
// holder was found gone at start).
func (h *Host) MarkEnded(e wire.Exit) {
	// The registry does not keep the end offset: the log does.
	if l, err := h.outlog(); err == nil && l.Refresh() == nil {
		e.End = max(e.End, l.End())
	}
	h.finish(e)
}

func (h *Host) finish(e wire.Exit) {
	h.mu.Lock()
	if h.exit != nil {
		h.mu.Unlock()
		return
	}
	if e.End < h.end {
		e.End = h.end
	}
	if e.State == "closed" && e.Reason == "" {
		e.Reason = h.closeReason // closed by SIGTERM to the holder: the reason is ours
	}
	// Bytes the holder logged after the last frame we saw are on disk; the
	// viewers read them from there.
	h.end = e.End
	h.exit = &e
	h.up = nil
	close(h.changed)
	h.changed = make(chan struct{})
	close(h.ended)
	h.mu.Unlock()
	if h.onEnd != nil {
		h.onEnd(e)
	}
}

// Input sends bytes to the session's pty.
func (h *Host) Input(p []byte) error {
	h.stampInput()
	err := h.toHolder(func(w *wire.Writer) error { return w.Input(p) })
	if err == nil {
		h.inBytes.Add(uint64(len(p)))
		h.meter.InputBytes.Add(uint64(len(p)))
	}
	return err
}

// Resize sets the session's pty size.
func (h *Host) Resize(cols, rows uint16) error {
	if err := wire.CheckSize(cols, rows); err != nil {
		return err
	}
	err := h.toHolder(func(w *wire.Writer) error { return w.Resize(cols, rows) })
	if err == nil {
		h.mu.Lock()
		h.reqCols, h.reqRows = cols, rows
		h.mu.Unlock()
	}
	return err
}

// Signal sends a signal to the session's foreground process group.
func (h *Host) Signal(sig uint8) error {
	h.stampInput()
	return h.toHolder(func(w *wire.Writer) error { return w.Signal(sig) })
}

// Kill ends the session on purpose: SIGHUP, then SIGKILL after grace. It
// returns once the holder has been asked; wait on Ended for the end.
func (h *Host) Kill(grace time.Duration) error {
	h.mu.Lock()
	h.closing = true
	h.mu.Unlock()
	return h.toHolder(func(w *wire.Writer) error { return w.Close(uint32(grace.Milliseconds())) })
}

func (h *Host) toHolder(fn func(*wire.Writer) error) error {
	h.mu.Lock()
	up, exit := h.up, h.exit
	h.mu.Unlock()
	if exit != nil {
		return ErrEnded
	}
	if up == nil {
		return ErrDisconnected
	}
	if err := up.send(fn); err != nil {
		return fmt.Errorf("session: write to holder: %w", err)
	}
	return nil
}

// Resyncs counts viewers that fell behind and were skipped to the present.
func (h *Host) Resyncs() uint64 { return h.resyncs.Load() }

// Viewers returns who is attached.
func (h *Host) Viewers() wire.Viewers {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.viewersLocked()
}

func (h *Host) viewersChangedLocked() {
	h.viewersVer++
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *Host) addViewer(v *viewer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.viewers == nil {
		h.viewers = make(map[*viewer]struct{})
	}
	h.viewerSeq++
	v.id = h.viewerSeq
	h.viewers[v] = struct{}{}
	h.questions.Attach(v.id, !v.readOnly)
	h.usage.viewersChanged(len(h.viewers), time.Now())
	h.viewersChangedLocked()
}

func (h *Host) removeViewer(v *viewer) {
	now := time.Now()
	h.mu.Lock()
	delete(h.viewers, v)
	// Questions a writable viewer was to answer, and that no writable
	// viewer left will see, are answered from the model.
	orphans := h.questions.Leave(v.id, now)
	h.usage.viewersChanged(len(h.viewers), now)
	// The size passes on (to the most recently active writable viewer
	// left, under latest): one Viewers frame says both.
	_, h.sizeOwner = sizepolicy.Decide(h.policy, h.sizeViewersLocked())
	h.viewersChangedLocked()
	h.mu.Unlock()
	for _, q := range orphans {
		h.modelAnswers(q)
	}
	h.applySizePolicy()
}

func (h *Host) viewersLocked() wire.Viewers {
	out := wire.Viewers{Viewers: []wire.ViewerInfo{}, Cols: h.cols, Rows: h.rows}
	for v := range h.viewers {
		out.Viewers = append(out.Viewers, wire.ViewerInfo{ID: v.id, Kind: v.opts.Kind, ReadOnly: v.readOnly, Cols: v.cols, Rows: v.rows})
	}
	slices.SortFunc(out.Viewers, func(a, b wire.ViewerInfo) int { return a.ID - b.ID })
	out.SizeOwner = h.sizeOwner
	return out
}
