package holder

import (
	"syscall"

	"golang.org/x/sys/unix"

	"termkeep/internal/wire"
)

// readTermMode reads the ECHO and ICANON flags of the pty whose master is
// rc: on Linux the master answers TCGETS with its terminal side's
// settings, the ones the child sets.
func readTermMode(rc syscall.RawConn) (wire.TermMode, error) {
	var t *unix.Termios
	var ierr error
	if err := rc.Control(func(fd uintptr) { t, ierr = unix.IoctlGetTermios(int(fd), unix.TCGETS) }); err != nil {
		return wire.TermMode{}, err
	}
	if ierr != nil {
		return wire.TermMode{}, ierr
	}
	return wire.TermMode{Echo: t.Lflag&unix.ECHO != 0, Canonical: t.Lflag&unix.ICANON != 0}, nil
}
