// Package fdpass passes file descriptors over unix sockets (SCM_RIGHTS):
// a reader that keeps those that come with the bytes, and a writer of a
// frame with one. It is how `termkeep attach` hands its terminal to the
// server and the server to the holder (docs/architecture.md, Lanes).
package fdpass

import (
	"io"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Reader reads a unix socket with recvmsg, keeping the file descriptors
// that come with the bytes (a lane frame's terminal) in the order they
// came. It is read by one goroutine, the connection's reader, which alone
// calls Take; Close may come from another, the connection's owner, while
// that reader is still winding down. The call is raw, as the other
// hot-path calls are (internal/rawio): keystrokes arrive here.
type Reader struct {
	rc  syscall.RawConn
	oob []byte

	mu     sync.Mutex // guards fds and closed
	fds    []int
	closed bool // descriptors that come after Close are closed at once
}

// maxQueuedFDs bounds the descriptors waiting for their lane frame; more
// are closed at once.
const maxQueuedFDs = 4

// NewReader returns a Reader of the socket rc.
func NewReader(rc syscall.RawConn) *Reader {
	return &Reader{rc: rc, oob: make([]byte, syscall.CmsgSpace(4*maxQueuedFDs))}
}

func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	var oobn int
	werr := r.rc.Read(func(fd uintptr) bool {
		for {
			var iov syscall.Iovec
			iov.Base = &p[0]
			iov.SetLen(len(p))
			var msg syscall.Msghdr
			msg.Iov = &iov
			msg.Iovlen = 1
			msg.Control = &r.oob[0]
			msg.SetControllen(len(r.oob))
			r0, _, e := syscall.RawSyscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&msg)), syscall.MSG_CMSG_CLOEXEC)
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			n, errno, oobn = int(r0), e, int(msg.Controllen)
			return true
		}
	})
	if werr != nil {
		return 0, werr
	}
	if errno != 0 {
		return 0, errno
	}
	if oobn > 0 {
		r.keep(r.oob[:oobn])
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// keep queues the descriptors of a control message, closing those past
// the bound.
func (r *Reader) keep(oob []byte) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if r.closed || len(r.fds) >= maxQueuedFDs {
				syscall.Close(fd)
				continue
			}
			r.fds = append(r.fds, fd)
		}
	}
}

// Take returns the oldest queued descriptor, or -1; the caller owns it.
func (r *Reader) Take() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.fds) == 0 {
		return -1
	}
	fd := r.fds[0]
	r.fds = r.fds[1:]
	return fd
}

// Close closes the descriptors nobody took, and any that come later.
func (r *Reader) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for _, fd := range r.fds {
		syscall.Close(fd)
	}
	r.fds = nil
}

// NonBlockingTerminal reports whether fd is a terminal open non-blocking:
// the only file a lane writes to, because a write to it never waits.
func NonBlockingTerminal(fd int) bool {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_NONBLOCK == 0 {
		return false
	}
	_, err = unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}
