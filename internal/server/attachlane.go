package server

import (
	"net"
	"os"

	"termkeep/internal/fdpass"
	"termkeep/internal/rawio"
	"termkeep/internal/session"
)

// Take returns a descriptor that came over the connection, or -1
// (session.FDTaker).
func (h *hijacked) Take() int {
	if h.fds == nil {
		return -1
	}
	return h.fds.Take()
}

var _ session.FDTaker = (*hijacked)(nil)

// localFDs returns a reader of c that keeps the descriptors sent over it,
// when c is a unix socket from the server's own uid (local); else nil.
func localFDs(c net.Conn) (r *fdpass.Reader, local bool) {
	if raw, ok := c.(*rawio.Conn); ok {
		c = raw.Conn
	}
	uc, ok := c.(*net.UnixConn)
	if !ok || peerUID(uc) != os.Getuid() {
		return nil, false
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return nil, false
	}
	return fdpass.NewReader(rc), true
}
