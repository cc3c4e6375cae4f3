package session

// The host's connection to its holder: dialling it, reading its stream,
// reconnecting after a drop, and deciding how a session whose holder is
// gone has ended.

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/rawio"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// Connect dials the holder and resumes its stream from offset from (-1: the
// end of the log on disk). It returns once the holder has welcomed the
// server; the stream is then read in the background, and a dropped
// connection is retried until the holder is found gone, at which point the
// session ends as exited (status on disk) or interrupted.
func (h *Host) Connect(from int64) error { return h.connect(from, false) }

// connect is Connect; again says it follows a dropped connection, for the
// log line and the count.
func (h *Host) connect(from int64, again bool) error {
	h.mu.Lock()
	shut := h.shut
	h.mu.Unlock()
	if shut {
		return errHostClosed
	}
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
		h.shell.load(l, uint64(from))
	}
	up, welcome, err := dialHolder(h.dir, from)
	if err != nil {
		return err
	}
	h.mu.Lock()
	if h.shut {
		// Closed while dialling: a stopping server keeps no connection.
		h.mu.Unlock()
		up.c.Close()
		return errHostClosed
	}
	h.readers.Add(1)
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

// errHostClosed is returned by connect once Close has begun.
var errHostClosed = errors.New("session: the host is closed")

// holderConn is the connection to the holder.
type holderConn struct {
	c       net.Conn
	version int // the protocol version the holder welcomed with
	wmu     sync.Mutex
	w       *wire.Writer
}

func (u *holderConn) send(fn func(*wire.Writer) error) error {
	u.wmu.Lock()
	defer u.wmu.Unlock()
	return fn(u.w)
}

// errNotAccepted: the holder's protocol version predates the frame.
var errNotAccepted = errors.New("session: the holder's protocol version does not know this frame")

// frame sends a frame of type t, unless the holder's version does not
// accept it (wire.HolderAccepts): an older holder would hang up on it.
func (u *holderConn) frame(t wire.Type, payload []byte) error {
	if !wire.HolderAccepts(u.version, t) {
		return errNotAccepted
	}
	return u.send(func(w *wire.Writer) error { return w.Frame(t, payload) })
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
	up.version = welcome.Version
	return up, welcome, nil
}

// readHolder consumes the holder's stream until it ends, then decides
// whether to reconnect or to record the end. A connection dropped by Close
// is neither: the session goes on without this server.
func (h *Host) readHolder(up *holderConn) {
	defer h.readers.Done()
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
			h.shell.feed(off, time.Now(), data)
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
			if h.closing && e.State != "closed" {
				// Asked to close, it ended meanwhile (by itself, or by a
				// stop): the user's close is what they asked for.
				e.State, e.Reason = "closed", ""
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
	shut := h.shut
	h.mu.Unlock()
	if !shut {
		h.reconnect()
	}
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
			h.finish(ExitFromMeta(m))
			return
		}
		if outOfFiles() { // rlimit.go: nothing tells whether the holder is gone
			attempt = 0
		} else if !h.holderAlive() {
			break
		} else if err := h.connect(-1, true); err == nil || errors.Is(err, errHostClosed) {
			return
		}
		select {
		case <-h.closed:
			// The server is stopping: whatever became of the holder, the
			// next server finds it.
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, time.Second)
	}
	// One last look: the holder may have written its exit while we retried.
	if m, err := sessiondir.ReadMeta(h.dir); err == nil && m.EndedAt != nil {
		h.finish(ExitFromMeta(m))
		return
	}
	if held, _ := sessiondir.LockHeld(h.dir); held {
		// Its holder runs, its socket gone: recorded as ended, the session
		// could be restored over it. It stays running, unreachable.
		h.log.Error("a live holder cannot be reached: its socket is gone; its session stays running, unreachable until the holder ends", "session", h.ID)
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

// holderAlive reports whether the session's holder runs: by its lock, or
// for a holder from before the lock, by the process meta.json names.
func (h *Host) holderAlive() bool {
	if held, known := sessiondir.LockHeld(h.dir); known {
		return held
	}
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

// ExitFromMeta is the end meta.json records (m.EndedAt set): how the
// session ended, its status and its last offset. An interrupted end in
// meta.json is the holder's own, stopped by a SIGTERM from outside.
func ExitFromMeta(m sessiondir.Meta) wire.Exit {
	e := wire.Exit{State: m.State(), ExitCode: m.ExitCode, Signal: m.Signal, End: m.End, Reason: m.Reason}
	if m.Interrupted {
		e.Cause = wire.CauseStopped
	}
	return e
}

// Resolve decides how a session the server finds on disk stands, without a
// live connection: ended (from meta.json) or interrupted. It is used when the
// holder cannot be reached at start.
func (h *Host) Resolve() wire.Exit {
	if m, err := sessiondir.ReadMeta(h.dir); err == nil && m.EndedAt != nil {
		return ExitFromMeta(m)
	}
	return h.interrupted()
}
