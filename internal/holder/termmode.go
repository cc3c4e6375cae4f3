package holder

import (
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

// sendTermMode tells the server the pty's mode, read now with the log's
// end at, when it differs from what this connection last said (*sent; nil:
// nothing yet). A pty that cannot be asked (the child's side closed, a
// system without the ioctl) leaves the server's view as it was.
func (u *upstream) sendTermMode(sent **wire.TermMode, at uint64) error {
	m, err := readTermMode(u.h.ptmxRC)
	if err != nil {
		return nil
	}
	m.At = at
	if *sent != nil && sameMode(**sent, m) {
		return nil
	}
	*sent = &m
	return u.send(func(w *wire.Writer) error { return w.TermMode(m) })
}
