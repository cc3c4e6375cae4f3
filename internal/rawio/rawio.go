// Package rawio makes the few system calls of a process's hot path without
// telling the Go scheduler: no hand-off of the P, and no wake-up of the
// runtime's monitor thread (sysmon), which every ordinary system call makes
// after the process was idle, and which then polls at 20 µs for a while.
// For the holder, a process that waits for its pty most of the time and
// wakes for each chunk of output, that monitor is most of the context
// switches a chunk costs (two thirds, measured: 3.3 against 1.3 per chunk).
//
// Only calls that do not block belong here: reads and writes of
// non-blocking descriptors (through a syscall.RawConn, which waits in the
// runtime's poller when the call would block) and writes and reads of
// local files in the page cache. A raw call that blocks holds its P, and
// with GOMAXPROCS=1 the whole process, until it returns.
//
// Linux only; elsewhere the functions make ordinary calls.
package rawio

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
)

// Read reads once from a non-blocking descriptor into p, waiting in the
// poller while there is nothing to read. It returns io.EOF at the end and
// the RawConn's error (a deadline, a closed file) while waiting. A hot
// path keeps a Reader instead: Read allocates one per call.
func Read(rc syscall.RawConn, p []byte) (int, error) { return NewReader(rc).Read(p) }

// ReadHolding is Read for a descriptor that another goroutine also reads,
// with TryRead under mu: whoever reads a chunk deals with it before the
// other can read the next one, so chunks are handled in the order read.
// The caller holds mu when it calls ReadHolding and holds it again when
// ReadHolding returns, whatever it returns; ReadHolding lets go of mu only
// while it waits in the poller, as sync.Cond.Wait does:
//
//	mu.Lock()
//	n, err := rawio.ReadHolding(rc, buf, &mu)
//	handle(buf[:n]) // before anyone reads on
//	mu.Unlock()
func ReadHolding(rc syscall.RawConn, p []byte, mu *sync.Mutex) (int, error) {
	return NewReader(rc).ReadHolding(p, mu)
}

// A Reader is Read and ReadHolding of one descriptor without allocating:
// the function a RawConn calls back is made once, not per read, so a
// process that reads for every chunk of output or every key leaves no
// garbage (a holder, whose heap is kept small, would otherwise collect,
// and a collection's own bookkeeping stays resident). Reads of one Reader
// are serialized, as the RawConn serializes them anyway.
type Reader struct {
	rc syscall.RawConn
	mu sync.Mutex // serializes reads; guards the fields below

	p        []byte
	hold     *sync.Mutex // ReadHolding's mu
	released bool        // hold is let go while waiting
	n        int
	err      error
	fn       func(fd uintptr) bool

	tryRead *oneCall // TryRead's own: it may run while a ReadHolding waits
}

// NewReader returns a Reader of rc.
func NewReader(rc syscall.RawConn) *Reader {
	r := &Reader{rc: rc, tryRead: newOneCall(rc, read)}
	r.fn = r.try
	return r
}

// TryRead is TryRead above. It may be called while another goroutine
// waits in ReadHolding.
func (r *Reader) TryRead(p []byte) (int, error) {
	n, err := r.tryRead.run(p)
	if err == nil && n == 0 {
		err = io.EOF
	}
	return n, err
}

// Read is Read above.
func (r *Reader) Read(p []byte) (int, error) { return r.ReadHolding(p, nil) }

// ReadHolding is ReadHolding above; mu nil is Read.
func (r *Reader) ReadHolding(p []byte, mu *sync.Mutex) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.p, r.hold, r.released, r.n, r.err = p, mu, false, 0, nil
	werr := r.rc.Read(r.fn)
	if r.released {
		mu.Lock()
	}
	n, err := r.n, r.err
	r.p, r.hold, r.err = nil, nil, nil
	if werr != nil {
		return 0, werr
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// try is the RawConn's callback: one read, or false to wait in the poller.
func (r *Reader) try(fd uintptr) bool {
	if r.released {
		r.hold.Lock()
		r.released = false
	}
	for {
		r.n, r.err = read(fd, r.p)
		if r.err == syscall.EINTR {
			continue
		}
		if r.err == syscall.EAGAIN && r.hold != nil {
			r.hold.Unlock()
			r.released = true
		}
		return r.err != syscall.EAGAIN
	}
}

// TryRead reads once from a non-blocking descriptor without waiting: it
// returns syscall.EAGAIN when there is nothing to read.
func TryRead(rc syscall.RawConn, p []byte) (int, error) { return NewReader(rc).TryRead(p) }

// ReadLazy is Read into a buffer that get supplies only once there is
// something to read: when a try would block, the buffer goes back through
// put before the wait, so a reader of a quiet peer holds none. It returns
// the buffer read into, which the caller puts back when done with it.
func ReadLazy(rc syscall.RawConn, get func() []byte, put func([]byte)) ([]byte, int, error) {
	var buf []byte
	var n int
	var err error
	werr := rc.Read(func(fd uintptr) bool {
		if buf == nil {
			buf = get()
		}
		for {
			n, err = read(fd, buf)
			switch err {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				put(buf)
				buf = nil
				return false
			}
			return true
		}
	})
	switch {
	case werr != nil:
		err = werr
	case err == nil && n == 0:
		err = io.EOF
	}
	if err != nil {
		if buf != nil {
			put(buf)
		}
		return nil, 0, err
	}
	return buf, n, nil
}

// Write writes all of p to a non-blocking descriptor, waiting in the
// poller while it is full. A hot path keeps a Writer instead.
func Write(rc syscall.RawConn, p []byte) (int, error) { return NewWriter(rc).Write(p) }

// A Writer is Write of one descriptor without allocating (as Reader).
// Writes of one Writer are serialized.
type Writer struct {
	rc syscall.RawConn
	mu sync.Mutex // serializes writes; guards the fields below

	p       []byte
	written int
	err     error
	fn      func(fd uintptr) bool

	tryWrite *oneCall // TryWrite's own: it may run while a Write waits
}

// NewWriter returns a Writer of rc.
func NewWriter(rc syscall.RawConn) *Writer {
	w := &Writer{rc: rc, tryWrite: newOneCall(rc, write)}
	w.fn = w.try
	return w
}

// TryWrite writes once, never waiting: it may take fewer bytes than p, or
// none (syscall.EAGAIN). It may be called while another goroutine waits
// in Write.
func (w *Writer) TryWrite(p []byte) (int, error) { return w.tryWrite.run(p) }

// oneCall makes one read or write (call) of a descriptor through its
// RawConn's Control, never waiting, without allocating: its callback is
// made once. Calls are serialized.
type oneCall struct {
	rc   syscall.RawConn
	call func(fd uintptr, p []byte) (int, error)
	mu   sync.Mutex // guards the fields below
	p    []byte
	n    int
	err  error
	fn   func(fd uintptr)
}

func newOneCall(rc syscall.RawConn, call func(fd uintptr, p []byte) (int, error)) *oneCall {
	c := &oneCall{rc: rc, call: call}
	c.fn = c.do
	return c
}

func (c *oneCall) run(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.p, c.n, c.err = p, 0, nil
	cerr := c.rc.Control(c.fn)
	n, err := c.n, c.err
	c.p, c.err = nil, nil
	if cerr != nil {
		return 0, cerr
	}
	return n, err
}

func (c *oneCall) do(fd uintptr) {
	for {
		c.n, c.err = c.call(fd, c.p)
		if c.err != syscall.EINTR {
			return
		}
	}
}

// Write is Write above.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.p, w.written, w.err = p, 0, nil
	werr := w.rc.Write(w.fn)
	written, err := w.written, w.err
	w.p, w.err = nil, nil
	if werr != nil && err == nil {
		err = werr
	}
	return written, err
}

func (w *Writer) try(fd uintptr) bool {
	for w.written < len(w.p) {
		n, err := write(fd, w.p[w.written:])
		if n > 0 {
			w.written += n
		}
		switch err {
		case nil:
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			w.err = err
			return true
		}
	}
	return true
}

// ReadWriter reads and writes a non-blocking descriptor (a socket, or a
// terminal opened non-blocking) with Read and Write above.
type ReadWriter struct {
	r *Reader
	w *Writer
}

// NewReadWriter is Read and Write of rc as an io.ReadWriter.
func NewReadWriter(rc syscall.RawConn) ReadWriter { return ReadWriter{NewReader(rc), NewWriter(rc)} }

func (rw ReadWriter) Read(p []byte) (int, error)  { return rw.r.Read(p) }
func (rw ReadWriter) Write(p []byte) (int, error) { return rw.w.Write(p) }

// Conn is a socket whose Read and Write are Read and Write above: raw
// calls, waiting in the poller when they would block, so deadlines hold.
// Everything else (Close, deadlines, addresses) is the net.Conn's.
type Conn struct {
	net.Conn
	rw ReadWriter
}

// NewConn returns c with raw reads and writes, or c itself when it has no
// descriptor of its own to make them on (a TLS connection, a pipe).
func NewConn(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	return &Conn{Conn: c, rw: NewReadWriter(rc)}
}

func (c *Conn) Read(p []byte) (int, error)  { return c.rw.Read(p) }
func (c *Conn) Write(p []byte) (int, error) { return c.rw.Write(p) }

// File is an *os.File (a local file: a log segment) whose Write and ReadAt
// are raw calls. Everything else is the os.File's.
type File struct {
	*os.File
}

// Write appends p (the file is opened O_APPEND) or writes it at the
// file's position.
func (f File) Write(p []byte) (int, error) {
	fd := f.Fd()
	written := 0
	for written < len(p) {
		n, err := write(fd, p[written:])
		if n > 0 {
			written += n
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return written, &os.PathError{Op: "write", Path: f.Name(), Err: err}
		}
		if n == 0 {
			return written, io.ErrShortWrite
		}
	}
	return written, nil
}

// ReadAt reads len(p) bytes at off, as os.File.ReadAt does: fewer only with
// an error, io.EOF at the end of the file.
func (f File) ReadAt(p []byte, off int64) (int, error) {
	fd := f.Fd()
	read := 0
	for read < len(p) {
		n, err := pread(fd, p[read:], off+int64(read))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return read, &os.PathError{Op: "read", Path: f.Name(), Err: err}
		}
		if n == 0 {
			return read, io.EOF
		}
		read += n
	}
	return read, nil
}

// Pread reads once from fd at off: a local file, or a /proc file that
// answers at once.
func Pread(fd uintptr, p []byte, off int64) (int, error) {
	for {
		n, err := pread(fd, p, off)
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// ReadFD reads once from fd, never waiting: for a descriptor the caller
// polls itself (inside a RawConn's Read, say).
func ReadFD(fd uintptr, p []byte) (int, error) {
	for {
		n, err := read(fd, p)
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// WriteFD writes once to a non-blocking fd, never waiting: it may take
// fewer bytes than p, or none (syscall.EAGAIN).
func WriteFD(fd uintptr, p []byte) (int, error) {
	for {
		n, err := write(fd, p)
		if err != syscall.EINTR {
			return n, err
		}
	}
}
