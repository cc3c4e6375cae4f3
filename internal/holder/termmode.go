package holder

import (
	"sync"
	"syscall"
	"time"

	"termkeep/internal/wire"
)

// The pty's input mode (wire.TypeTermMode): whether the line discipline
// echoes what is typed and edits it a line at a time. A viewer that shows
// typing before its echo arrives needs it: echo off with line editing on
// is a password prompt. The mode is the child's to change (tcsetattr on
// its side of the pty), and nothing tells the holder when it does, so the
// forwarder looks (one ioctl) whenever it has caught up with the output,
// and again soon after output stops (recheckAfter): programs change the
// mode around what they print (a prompt) or around a line typed.

// recheckSteps are the times after the last output at which the forwarder
// looks at the mode again; past the last it looks every second, as it
// wakes anyway.
var recheckSteps = [...]time.Duration{
	5 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second,
}

// recheckAfter is how long the forwarder waits before it looks at the
// mode again, since the last output: never 0, at most a second.
func recheckAfter(since time.Duration) time.Duration {
	since = max(since, 0)
	for _, s := range recheckSteps {
		if s > since {
			return s - since
		}
	}
	return time.Second
}

// sameMode reports whether a and b say the same of the pty, wherever they
// were read.
func sameMode(a, b wire.TermMode) bool {
	return a.Echo == b.Echo && a.Canonical == b.Canonical
}

// modeSent is what a connection last said of the mode.
type modeSent struct {
	m  wire.TermMode
	ok bool // m was sent
}

// sendTermMode tells the server the pty's mode, read now with the log's
// end at, when it differs from what this connection last said (*sent). A
// pty that cannot be asked (the child's side closed, a system without the
// ioctl) leaves the server's view as it was.
func (u *upstream) sendTermMode(sent *modeSent, at uint64) error {
	m, err := u.h.ptmxMode.read()
	if err != nil {
		return nil
	}
	m.At = at
	if sent.ok && sameMode(sent.m, m) {
		return nil
	}
	*sent = modeSent{m, true}
	return u.send(func(w *wire.Writer) error { return w.TermMode(m) })
}

// A modeReader reads the pty's mode without allocating: the forwarder
// asks each time it catches up with the output, so per chunk of output.
type modeReader struct {
	rc  syscall.RawConn
	mu  sync.Mutex // guards the fields below
	m   wire.TermMode
	err error
	fn  func(fd uintptr)
}

func newModeReader(rc syscall.RawConn) *modeReader {
	r := &modeReader{rc: rc}
	r.fn = func(fd uintptr) { r.m, r.err = ptyMode(fd) }
	return r
}

func (r *modeReader) read() (wire.TermMode, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.rc.Control(r.fn); err != nil {
		return wire.TermMode{}, err
	}
	return r.m, r.err
}

// readTermMode reads the mode of the pty whose master is rc (ptyMode).
func readTermMode(rc syscall.RawConn) (wire.TermMode, error) { return newModeReader(rc).read() }
