package attach

import (
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"termkeep/internal/rawio"
)

// rawTerm is attach's terminal as a raw non-blocking descriptor that the Go
// runtime's poller never sees. A file in the poller's epoll set (edge-
// triggered, in and out) wakes the process for each key that arrives and
// for each echo a lane writes there, though no goroutine waits on it: about
// two wake-ups per key. The terminal sits instead, for input only, in an
// epoll instance of attach's own, which is in the runtime's poller in its
// place: a key wakes the reader, an echo does not. (A goroutine waiting in
// poll(2) would be a blocking system call, which keeps the runtime's
// monitor thread ticking and hands the P off: three times the context
// switches per key, measured.) A write that would block waits in poll(2)
// for room.
//
// pause stops the reader for an input lane: once it returns, the reader
// reads the terminal no more and the terminal is out of attach's epoll set
// until resume; what is typed meanwhile stays in the terminal for whoever
// reads it.
type rawTerm struct {
	fd int      // the terminal
	ep *os.File // attach's epoll instance; the runtime polls it
	rc syscall.RawConn

	mu      sync.Mutex
	cond    sync.Cond
	watched bool // fd is in ep
	paused  bool // the reader is to leave the terminal alone
	busy    bool // the reader handles a chunk it read
	gone    bool // the reader returned for good (done)
	closed  bool
}

// newRawTerm takes fd, a non-blocking descriptor of the terminal (from
// openTerminal); Close closes it.
func newRawTerm(fd int) (*rawTerm, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, err
	}
	t := &rawTerm{fd: fd, ep: os.NewFile(uintptr(epfd), "epoll")}
	t.cond.L = &t.mu
	if t.rc, err = t.ep.SyscallConn(); err == nil {
		err = t.watch(true)
	}
	if err != nil {
		t.ep.Close()
		return nil, err
	}
	return t, nil
}

// watch adds the terminal to attach's epoll set, for input, or takes it
// out (under mu).
func (t *rawTerm) watch(on bool) error {
	if on == t.watched {
		return nil
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(t.fd)}
	op := unix.EPOLL_CTL_DEL
	if on {
		op = unix.EPOLL_CTL_ADD
	}
	var err error
	t.rc.Control(func(epfd uintptr) { err = unix.EpollCtl(int(epfd), op, t.fd, &ev) })
	if err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	t.watched = on
	return nil
}

// Read reads one chunk typed on the terminal; it is called by one
// goroutine, which handles each chunk before it reads again (pause waits
// for that). It returns io.EOF when the terminal hangs up.
func (t *rawTerm) Read(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.busy = false // the last chunk is handled
	t.cond.Broadcast()
	for {
		for t.paused && !t.closed {
			t.cond.Wait()
		}
		if t.closed {
			return 0, os.ErrClosed
		}
		t.mu.Unlock()
		var n int
		var rerr error
		stopped := false
		werr := t.rc.Read(func(epfd uintptr) bool {
			// Under mu, so that pause cannot return between the check
			// and the read; neither call blocks.
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.paused || t.closed {
				stopped = true
				return true
			}
			if !ready(int(epfd)) {
				return false // wait in the runtime's poller
			}
			n, rerr = rawio.ReadFD(uintptr(t.fd), p)
			if rerr == syscall.EAGAIN || rerr == syscall.EINTR {
				return false
			}
			t.busy = true
			return true
		})
		t.mu.Lock()
		switch {
		case t.closed:
			t.busy = false
			return 0, os.ErrClosed
		case werr != nil:
			t.busy = false
			return 0, werr
		case stopped:
			continue
		case rerr == syscall.EIO || (rerr == nil && n == 0):
			t.busy = false
			return 0, io.EOF // hung up
		case rerr != nil:
			t.busy = false
			return 0, rerr
		}
		return n, nil
	}
}

// ready reports whether the epoll instance epfd has an event (input or a
// hang-up of the terminal), without waiting.
func ready(epfd int) bool {
	var ev [1]unix.EpollEvent
	for {
		n, _, e := syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&ev[0])), 1, 0, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		return e == 0 && n > 0
	}
}

// done says the reader reads no more: pause need not wait for it.
func (t *rawTerm) done() {
	t.mu.Lock()
	t.busy, t.gone = false, true
	t.cond.Broadcast()
	t.mu.Unlock()
}

// pause returns once the reader will not read the terminal until resume,
// and has handled every chunk it read before; the terminal is then in no
// epoll set of attach's.
func (t *rawTerm) pause() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.paused = true
	if !t.closed {
		t.watch(false)
	}
	for t.busy && !t.gone && !t.closed {
		t.cond.Wait()
	}
}

// resume lets the reader read the terminal again.
func (t *rawTerm) resume() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.paused = false
	if !t.closed {
		t.watch(true)
	}
	t.cond.Broadcast()
}

// Write writes all of p, waiting in poll(2) while the terminal takes no
// more: a terminal that stops reading holds attach up, without spinning.
func (t *rawTerm) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := rawio.WriteFD(uintptr(t.fd), p[done:])
		done += n
		switch {
		case err == nil, err == syscall.EINTR:
		case err == syscall.EAGAIN:
			fds := [1]unix.PollFd{{Fd: int32(t.fd), Events: unix.POLLOUT}}
			if _, err := unix.Poll(fds[:], -1); err != nil && err != syscall.EINTR {
				return done, os.NewSyscallError("poll", err)
			}
		default:
			return done, err
		}
	}
	return done, nil
}

// Close ends the reader and closes the terminal's descriptor.
func (t *rawTerm) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.cond.Broadcast()
	t.mu.Unlock()
	t.ep.Close() // wakes a reader waiting in the runtime's poller
	return unix.Close(t.fd)
}
