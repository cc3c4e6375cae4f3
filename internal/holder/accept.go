package holder

import (
	"errors"
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
