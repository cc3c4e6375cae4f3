package holder

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"termkeep/internal/rawio"
	"termkeep/internal/wire"
)

// The input lane (docs/architecture.md, Lanes): while an
// output lane runs, the server may have the holder read the lane's
// terminal too, for the process that handed it over, so that a key
// reaches the pty without waking that process or the server. The holder
// writes only plain typing itself (wire.PlainTyping); anything else goes
// back, through the server, to the viewer, and the holder reads no more
// until the server says so again. A key is read only while its process
// is the terminal's foreground: stopped or gone, it has given the
// terminal back to its shell, and the lane ends.

// laneInputOff is the TERMKEEP_ECHO_LANE value that keeps output lanes
// but refuses to read their terminals (A/B runs).
const laneInputOff = "output"

// While an input lane reads, the forwarder sends output to the server
// once typing pauses for laneQuietFor, and at the latest laneForwardMax
// after it has output to send: the echo has reached the lane's terminal
// already, and sending it at once would wake the server on every key, in
// the middle of the next key's way. A typist's keys are tens of
// milliseconds apart, so the server still has each key's echo within
// milliseconds, between keys.
const (
	laneQuietFor   = 2 * time.Millisecond
	laneForwardMax = 100 * time.Millisecond
)

var (
	errLaneStopped   = errors.New("holder: the lane ended")
	errNotForeground = errors.New("the lane's process does not have its terminal")
)

// laneReader reads the open lane's terminal for its process.
type laneReader struct {
	h    *holder
	u    *upstream
	f    *os.File // the lane's terminal: the reader closes it once done
	rc   syscall.RawConn
	rdev uint64
	stat *os.File // /proc/<pid>/stat of the lane's process
	sfd  uintptr  // its descriptor
	// mu is held from a read until its bytes are written or handed
	// back: the forwarder takes it before it sends a lane's end, so that
	// every key read before the end has gone where it goes.
	mu      sync.Mutex
	stopped atomic.Bool
	done    chan struct{} // closed by stop
	resume  chan struct{} // one slot: read again after a hand-back
	quiet   *time.Timer   // fires laneQuietFor after the last key typed
	typedAt atomic.Int64  // when the last key was typed, in Unix nanoseconds
	paused  bool          // a hand-back waits for the server (under h.ptyMu)
	once    sync.Once

	// read's state for its callback, readFn (tryRead), made once: the
	// reader's goroutine's alone.
	buf    []byte
	n      int
	rerr   error
	readFn func(fd uintptr) bool
}

// laneRead has the open lane's terminal read for the process pid, or
// resumes reading after a hand-back. A lane it cannot read for (input
// lanes off, the process or its terminal not checkable) ends, so that
// its viewer reads its terminal again.
func (h *holder) laneRead(u *upstream, pid uint32) {
	h.ptyMu.Lock()
	defer h.ptyMu.Unlock()
	if !h.lane.open || h.laneFile.owner != u {
		return // stale: its lane has ended
	}
	if r := h.laneFile.reader; r != nil {
		if r.paused {
			r.paused = false
			h.lane.answered()
			r.resume <- struct{}{}
		}
		return
	}
	r, err := h.newLaneReader(u, pid)
	if err != nil {
		h.log.Info("not reading the lane's terminal", "pid", pid, "err", err)
		h.laneReport(h.lane.stop())
		return
	}
	h.laneFile.reader = r
	u.reader.Store(r)
	go r.run()
}

// newLaneReader checks what it can at once: input lanes are on, the
// process exists and its controlling terminal is the lane's. The caller
// holds ptyMu.
func (h *holder) newLaneReader(u *upstream, pid uint32) (*laneReader, error) {
	if h.laneInputOff {
		return nil, errors.New(laneEnv + "=" + laneInputOff)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(h.laneFile.fd), &st); err != nil {
		return nil, err
	}
	rc, err := h.laneFile.f.SyscallConn()
	if err != nil {
		return nil, err
	}
	stat, err := os.Open(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	r := &laneReader{h: h, u: u, f: h.laneFile.f, rc: rc, rdev: uint64(st.Rdev), stat: stat, sfd: stat.Fd(),
		done: make(chan struct{}), resume: make(chan struct{}, 1), quiet: time.NewTimer(0)}
	r.readFn = r.tryRead
	if ps, err := r.look(); err != nil || ps.ttyNr == 0 || uint64(uint32(ps.ttyNr)) != r.rdev {
		stat.Close()
		if err == nil {
			err = errors.New("the lane's terminal is not the process's controlling terminal")
		}
		return nil, err
	}
	return r, nil
}

func (r *laneReader) look() (procStat, error) {
	var b [512]byte
	n, err := rawio.Pread(r.sfd, b[:], 0)
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(b[:n])
}

// stop ends the reading: the reader closes the terminal once it is out of
// its read. Called with ptyMu held, never with mu.
func (r *laneReader) stop() {
	r.once.Do(func() {
		r.stopped.Store(true)
		close(r.done)
		r.f.SetReadDeadline(time.Unix(1, 0)) // wakes a read waiting in the poller
	})
}

// barrier returns once no key read before it is still on its way.
func (r *laneReader) barrier() {
	r.mu.Lock()
	r.mu.Unlock()
}

func (r *laneReader) run() {
	defer r.f.Close()
	defer r.stat.Close()
	buf := make([]byte, 4096)
	for {
		n, err := r.read(buf) // holds mu when it returns bytes
		switch {
		case errors.Is(err, errLaneStopped) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed):
			return
		case err != nil || n == 0:
			// The process left the foreground, or the terminal hung up:
			// it is its shell's now.
			r.end()
			return
		}
		if !r.take(buf[:n]) {
			select {
			case <-r.resume:
			case <-r.done:
				return
			}
		}
	}
}

// read waits for the terminal to have something, then, if the lane's
// process is still its foreground, reads it. It returns with mu held
// when it read bytes.
func (r *laneReader) read(buf []byte) (int, error) {
	r.buf, r.n, r.rerr = buf, 0, nil
	err := r.rc.Read(r.readFn)
	n, rerr := r.n, r.rerr
	r.buf, r.rerr = nil, nil
	if err != nil {
		return 0, err
	}
	if rerr == nil && n == 0 {
		rerr = errors.New("the lane's terminal hung up")
	}
	return n, rerr
}

// tryRead is read's callback for the RawConn, made once (newLaneReader):
// one per key, it allocates nothing.
func (r *laneReader) tryRead(fd uintptr) bool {
	r.mu.Lock()
	if r.stopped.Load() {
		r.mu.Unlock()
		r.rerr = errLaneStopped
		return true
	}
	if ps, err := r.look(); err != nil || !ps.foreground(r.rdev) {
		r.mu.Unlock()
		r.rerr = errNotForeground
		return true
	}
	r.n, r.rerr = rawio.ReadFD(fd, r.buf)
	if r.rerr == syscall.EAGAIN {
		r.mu.Unlock()
		return false
	}
	if r.rerr != nil || r.n == 0 {
		r.mu.Unlock()
	}
	return true
}

// take deals with keys read (mu held; it lets go): plain typing goes to
// the pty, as much as it takes at once, and the rest back to the server.
// It reports false after a hand-back: read no more until resumed.
func (r *laneReader) take(p []byte) bool {
	defer r.mu.Unlock()
	h := r.h
	wrote := 0
	if wire.PlainTyping(p) {
		// Stamped before the write: the echo may be read, and its
		// forwarding decided, before the write returns.
		r.typedAt.Store(time.Now().UnixNano())
		r.quiet.Reset(laneQuietFor)
		var err error
		wrote, err = h.ptmxW.TryWrite(p)
		wrote = max(wrote, 0)
		if wrote > 0 {
			r.u.typed.Add(uint64(wrote))
		}
		if err != nil && err != syscall.EAGAIN {
			h.log.Warn("write typed input", "err", err)
		}
		if wrote == len(p) {
			h.awaitEcho()
			return true
		}
	}
	// A hand-back: the viewer takes these as typed, then the server
	// lets the holder read again.
	rest := p[wrote:]
	h.ptyMu.Lock()
	r.paused = true
	if h.laneFile.reader == r {
		h.lane.handBack(rest) // until a lane-read answers (lane.go)
	}
	h.ptyMu.Unlock()
	if err := r.u.send(func(w *wire.Writer) error { return w.Frame(wire.TypeLaneInput, rest) }); err != nil {
		// The server is gone; the lane goes with its connection, and
		// the lane's record keeps these bytes for the claim of the
		// viewer's next connection.
		h.log.Warn("hand typed input back", "err", err)
	}
	return false
}

// end ends the lane from its reader: its process no longer has the
// terminal.
func (r *laneReader) end() {
	h := r.h
	h.ptyMu.Lock()
	defer h.ptyMu.Unlock()
	if h.laneFile.reader == r {
		h.laneReport(h.lane.stop())
	}
}
