package holder

import (
	"errors"
	"net"
	"os"
	"syscall"
	"time"
)

// retryAccept reports whether an Accept error is one to wait out rather than
// stop serving on: the process or the system is out of file descriptors or
// buffers for the moment, or a client gave up before it was accepted. The
// server's next connection waits in the backlog meanwhile. It sleeps before
// returning true, 5 ms first and doubling up to a second as net/http does,
// so the loop never spins; the caller resets *delay after a success.
func retryAccept(err error, delay *time.Duration) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			*delay = min(max(2**delay, 5*time.Millisecond), time.Second)
			time.Sleep(*delay)
			return true
		}
	}
	return false
}

// stopAccepting ends the accept loop (acceptDone closes when it has
// returned) without resetting a connection already queued: closing a
// listener resets whatever waits in its backlog, and a server that
// connected as the session ended would read ECONNRESET instead of the
// Exit. The socket's name goes first, so nothing new can queue; then the
// loop stops, and what is left in the backlog is taken before the
// listener closes.
func (h *holder) stopAccepting(acceptDone <-chan struct{}) {
	h.ln.SetUnlinkOnClose(false)
	os.Remove(h.ln.Addr().String())
	h.ln.SetDeadline(time.Now())
	<-acceptDone
	if rc, err := h.ln.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			for {
				// The listener is non-blocking: EAGAIN once the backlog is empty.
				nfd, _, err := syscall.Accept(int(fd))
				if err == syscall.EINTR || err == syscall.ECONNABORTED {
					continue
				}
				if err != nil {
					return
				}
				syscall.CloseOnExec(nfd)
				f := os.NewFile(uintptr(nfd), "holder.sock")
				c, err := net.FileConn(f)
				f.Close()
				if err != nil {
					continue
				}
				if uc, ok := c.(*net.UnixConn); ok {
					h.take(uc)
				} else {
					c.Close()
				}
			}
		})
	}
	h.ln.Close()
}
