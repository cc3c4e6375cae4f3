// Package peercred tells who is at the other end of a unix socket: the
// kernel's word for the peer's uid (SO_PEERCRED on Linux, LOCAL_PEERCRED on
// macOS), which the socket's file mode alone does not give, and its
// process (SO_PEERCRED, LOCAL_PEERPID).
package peercred

import (
	"errors"
	"net"
)

// ErrUnsupported is returned where the system has no way to ask.
var ErrUnsupported = errors.New("peercred: the peer's credentials are not available on this system")

// UID returns the uid of the process at the other end of c.
func UID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid := -1
	cerr := raw.Control(func(fd uintptr) { uid, err = fdUID(int(fd)) })
	if cerr != nil {
		return -1, cerr
	}
	return uid, err
}

// PID returns the id of the process at the other end of c, as it was when
// it connected (a process that passed the socket on is still the one
// named).
func PID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	pid := 0
	cerr := raw.Control(func(fd uintptr) { pid, err = fdPID(int(fd)) })
	if cerr != nil {
		return 0, cerr
	}
	return pid, err
}
