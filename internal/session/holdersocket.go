package session

// The socket to the holder: frames out within a deadline (a write the
// holder has not taken goes on in the background, whole), pings, the
// frames a holder's version accepts, the dial and its welcome, and a
// buffered frame reader whose buffer an idle session gives back.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"termkeep/internal/rawio"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// holderConn is the connection to the holder.
type holderConn struct {
	c       net.Conn
	version int           // the protocol version the holder welcomed with
	timeout time.Duration // how long a write may wait for the holder
	// slot is held (a value in it) by the write in progress; w and sw are
	// used only by the slot's holder. A write the holder does not take by
	// its deadline keeps the slot while what is left of it is written in
	// the background: a frame is never cut, so the stream stays whole for
	// a holder that resumes.
	slot  chan struct{}
	w     *wire.Writer // writes through sw
	sw    *stallWriter
	heard atomic.Uint64 // frames read from the holder, for its watch
	done  chan struct{} // closed when the holder's stream has been read to its end
	// prepared takes the holder's answers to shutdown frames
	// (PrepareShutdown); one that nobody waits for is dropped.
	prepared chan bool
	// fg pairs fg-state answers with their questions (foreground.go).
	fg fgAsks
}

func newHolderConn(c net.Conn, timeout time.Duration) *holderConn {
	// Input goes out as a raw write, as output comes in (newFrameReader): an
	// ordinary system call after the server was idle wakes the runtime's
	// monitor thread (internal/rawio), once per keystroke.
	sw := &stallWriter{conn: rawio.NewConn(c)}
	return &holderConn{
		c: c, timeout: timeout, slot: make(chan struct{}, 1), done: make(chan struct{}), prepared: make(chan bool, 1),
		w: wire.NewWriter(sw), sw: sw,
	}
}

// stallWriter writes to the holder's socket until the write deadline set
// on it; from the first write the deadline stopped, it keeps what is left
// (and whatever is written after it) in rest, for the caller to write in
// the background.
type stallWriter struct {
	conn net.Conn
	rest []byte
}

func (s *stallWriter) Write(p []byte) (int, error) {
	if len(s.rest) > 0 {
		s.rest = append(s.rest, p...)
		return len(p), nil
	}
	n, err := s.conn.Write(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		s.rest = append([]byte(nil), p[n:]...) // p is the frame writer's buffer
		return len(p), nil
	}
	return n, err
}

// ErrHolderSilent is returned (wrapped) by Connect when the holder's socket
// takes the connection but the holder does not welcome the server within
// the holder timeout: it is stopped or wedged.
var ErrHolderSilent = errors.New("session: the holder does not answer")

// ErrHolderStuck is what a write the holder has not taken within the
// deadline matches (errors.Is): the holder does not answer, or the program
// in the session does not read its input.
var ErrHolderStuck = errors.New("session: the holder is not taking writes")

// stuckError is an ErrHolderStuck with the sentence a user reads.
type stuckError struct{ msg string }

func (e *stuckError) Error() string        { return e.msg }
func (e *stuckError) Is(target error) bool { return target == ErrHolderStuck }

// send runs fn, which writes frames, within the connection's deadline. A
// write the holder has not taken by then goes on in the background.
func (u *holderConn) send(fn func(*wire.Writer) error) error {
	deadline := time.Now().Add(u.timeout)
	select {
	case u.slot <- struct{}{}:
	default:
		// A write is in progress: wait for it, within the deadline.
		t := time.NewTimer(u.timeout)
		select {
		case u.slot <- struct{}{}:
			t.Stop()
		case <-t.C:
			return &stuckError{fmt.Sprintf("the session's holder has not taken what was written to it before for %s: it does not answer, or the program in the session does not read its input; this was not sent (`termkeep ls` shows whether it is unresponsive, `termkeep kill` ends the session)", u.timeout)}
		}
	}
	u.c.SetWriteDeadline(deadline)
	err := fn(u.w)
	rest := u.sw.rest
	if len(rest) == 0 {
		<-u.slot
		return err
	}
	u.sw.rest = nil
	go func() {
		u.c.SetWriteDeadline(time.Time{})
		u.sw.conn.Write(rest) // an error is a connection gone, which its reader sees
		<-u.slot
	}()
	return &stuckError{fmt.Sprintf("the session's holder did not take this within %s: it does not answer, or the program in the session does not read its input; the rest of it is delivered if the holder resumes (`termkeep kill` ends the session)", u.timeout)}
}

// tryPing sends a ping unless a write is in progress: a holder that has
// not taken that write would not answer the ping either. It never waits.
func (u *holderConn) tryPing(seq uint64) {
	select {
	case u.slot <- struct{}{}:
	default:
		return
	}
	go func() {
		u.c.SetWriteDeadline(time.Time{})
		u.w.Uint64(wire.TypePing, seq)
		<-u.slot
	}()
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

func dialHolder(dir string, from int64, timeout time.Duration) (*holderConn, wire.Welcome, error) {
	var welcome wire.Welcome
	sock := filepath.Join(dir, sessiondir.SocketFile)
	c, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		return nil, welcome, fmt.Errorf("session: dial holder: %w", err)
	}
	up := newHolderConn(c, timeout)
	if err := up.w.JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: wire.RoleServer, From: from}); err != nil {
		c.Close()
		return nil, welcome, fmt.Errorf("session: hello to holder: %w", err)
	}
	c.SetReadDeadline(time.Now().Add(timeout))
	var buf []byte
	f, err := wire.ReadFrame(c, &buf)
	if err != nil {
		c.Close()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, welcome, fmt.Errorf("%w: no welcome within %s", ErrHolderSilent, timeout)
		}
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
