package holder

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"termkeep/internal/wire"
)

// ptyMode reads the ECHO and ICANON flags of the pty whose master is
// fd: on Linux the master answers TCGETS with its terminal side's
// settings, the ones the child sets.
func ptyMode(fd uintptr) (wire.TermMode, error) {
	var t unix.Termios
	// A raw ioctl: unix.IoctlGetTermios returns a Termios on the heap.
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, fd, unix.TCGETS, uintptr(unsafe.Pointer(&t))); e != 0 {
		return wire.TermMode{}, e
	}
	return wire.TermMode{Echo: t.Lflag&unix.ECHO != 0, Canonical: t.Lflag&unix.ICANON != 0}, nil
}
