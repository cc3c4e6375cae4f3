package server

import (
	"net"
	"os"

	"termkeep/internal/fdpass"
	"termkeep/internal/peercred"
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
// when c is a unix socket from the server's own uid (local), and the
// peer's process when the system says (0: unknown); else nil.
func localFDs(c net.Conn) (r *fdpass.Reader, local bool, pid int) {
	if raw, ok := c.(*rawio.Conn); ok {
		c = raw.Conn
	}
	uc, ok := c.(*net.UnixConn)
	if !ok || peerUID(uc) != os.Getuid() {
		return nil, false, 0
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return nil, false, 0
	}
	// The holder reads an input lane's terminal only while this process
	// leads its foreground (session/viewer_lanein.go).
	if p, err := peercred.PID(uc); err == nil && p > 0 {
		pid = p
	}
	return fdpass.NewReader(rc), true, pid
}
