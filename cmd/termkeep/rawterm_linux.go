package main

import (
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawTerm is attach's terminal as a raw non-blocking descriptor that the Go
// runtime's poller never sees. A file in the poller's epoll set (edge-
// triggered, in and out) wakes the process for each key that arrives and
// for each echo a lane writes there, though no goroutine waits on it: about
// two wake-ups per key. Here one goroutine reads, waiting in poll(2) on the
// terminal and an eventfd of its own; a write that would block waits in
// poll(2) for room.
//
// pause stops the reader for an input lane: once it returns, the reader
// neither reads nor polls the terminal until resume, and what is typed
// meanwhile stays in the terminal for whoever reads it.
type rawTerm struct {
	fd, ev int // the terminal; the eventfd that wakes the reader's poll

	mu      sync.Mutex
	cond    sync.Cond
	paused  bool // the reader is to leave the terminal alone
	busy    bool // the reader polls, reads, or handles a chunk it read
	polling bool // the reader is in poll(2) with fd
	gone    bool // the reader returned for good (done)
	closed  bool
}

// newRawTerm takes fd, a non-blocking descriptor of the terminal (from
// openTerminal); Close closes it.
func newRawTerm(fd int) (*rawTerm, error) {
	ev, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("eventfd", err)
	}
	t := &rawTerm{fd: fd, ev: ev}
	t.cond.L = &t.mu
	return t, nil
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
		t.busy, t.polling = true, true
		t.mu.Unlock()
		fds := [2]unix.PollFd{{Fd: int32(t.fd), Events: unix.POLLIN}, {Fd: int32(t.ev), Events: unix.POLLIN}}
		_, err := unix.Poll(fds[:], -1)
		t.mu.Lock()
		t.polling = false
		t.cond.Broadcast()
		if err == nil && fds[1].Revents != 0 {
			var b [8]byte
			rawRead(t.ev, b[:]) // reset the eventfd's count
		}
		if t.closed || t.paused {
			t.busy = false
			t.cond.Broadcast()
			continue
		}
		if err == syscall.EINTR || (err == nil && fds[0].Revents == 0) {
			continue
		}
		if err != nil {
			t.busy = false
			return 0, os.NewSyscallError("poll", err)
		}
		// Under mu, so that pause cannot return between the check above
		// and this read; it does not block.
		n, err := rawRead(t.fd, p)
		switch {
		case err == syscall.EAGAIN || err == syscall.EINTR:
			continue
		case err == syscall.EIO || (err == nil && n == 0):
			t.busy = false
			return 0, io.EOF // hung up
		case err != nil:
			t.busy = false
			return 0, err
		}
		return n, nil
	}
}

// done says the reader reads no more: pause need not wait for it.
func (t *rawTerm) done() {
	t.mu.Lock()
	t.busy, t.gone = false, true
	t.cond.Broadcast()
	t.mu.Unlock()
}

// pause returns once the reader will neither read nor poll the terminal
// until resume, and has handled every chunk it read before.
func (t *rawTerm) pause() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.paused = true
	if t.polling {
		t.wake()
	}
	for t.busy && !t.gone && !t.closed {
		t.cond.Wait()
	}
}

// resume lets the reader read the terminal again.
func (t *rawTerm) resume() {
	t.mu.Lock()
	t.paused = false
	t.cond.Broadcast()
	t.mu.Unlock()
}

// wake ends the reader's poll (under mu).
func (t *rawTerm) wake() {
	one := [8]byte{1}
	rawWrite(t.ev, one[:]) // host order; any non-zero count wakes it
}

// Write writes all of p, waiting in poll(2) while the terminal takes no
// more: a terminal that stops reading holds attach up, without spinning.
func (t *rawTerm) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := rawWrite(t.fd, p[done:])
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

// Close ends the reader and closes the terminal's descriptor, once the
// reader no longer polls it.
func (t *rawTerm) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.cond.Broadcast()
	if t.polling {
		t.wake()
	}
	for t.polling {
		t.cond.Wait()
	}
	t.mu.Unlock()
	unix.Close(t.ev)
	return unix.Close(t.fd)
}

// rawRead and rawWrite do not block (non-blocking descriptors), so they
// need not tell the scheduler: an ordinary system call after attach was
// idle wakes the runtime's monitor thread.
func rawRead(fd int, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
