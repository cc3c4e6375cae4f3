package attach

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// openTerminal opens the terminal that in and out both are once more, as a
// descriptor of attach's own: non-blocking, never in the Go runtime's
// poller (rawterm_linux.go), without changing the flags of the file in and
// out share with the shell (each open of a terminal has flags of its own).
// It returns -1 when in and out are not one terminal, or when the terminal
// cannot be opened again; attach then uses in and out as they are.
func openTerminal(in, out *os.File) int {
	var a, b syscall.Stat_t
	if syscall.Fstat(int(in.Fd()), &a) != nil || syscall.Fstat(int(out.Fd()), &b) != nil ||
		a.Mode&syscall.S_IFMT != syscall.S_IFCHR || a.Rdev != b.Rdev {
		return -1
	}
	path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(in.Fd())))
	if err != nil {
		return -1
	}
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	// The path names the same terminal unless it was replaced meanwhile.
	var c syscall.Stat_t
	if syscall.Fstat(fd, &c) != nil || c.Rdev != a.Rdev || c.Mode&syscall.S_IFMT != syscall.S_IFCHR {
		unix.Close(fd)
		return -1
	}
	return fd
}

// openRawTerm is attach's raw terminal on in and out, or nil when they are
// not one terminal.
func openRawTerm(in, out *os.File) *rawTerm {
	fd := openTerminal(in, out)
	if fd < 0 {
		return nil
	}
	t, err := newRawTerm(fd)
	if err != nil {
		unix.Close(fd)
		return nil
	}
	return t
}

// TTYName is the path of the terminal on in ("/dev/pts/3"), or "a
// terminal" when it cannot be found: how attach is shown to the session's
// other viewers.
func TTYName(in *os.File) string {
	if path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(in.Fd()))); err == nil && strings.HasPrefix(path, "/dev/") {
		return path
	}
	return "a terminal"
}

// leadsTerminal is rawTerm.leads, replaced by tests that run attach on a
// terminal that is not the test's controlling one.
var leadsTerminal = (*rawTerm).leads

// leads reports whether attach's process group is the foreground of the
// terminal and the terminal its controlling one: only then can the
// holder see (in /proc) that attach still has the terminal, so only then
// may it read it for attach.
func (t *rawTerm) leads() bool {
	pgrp, err := unix.IoctlGetInt(t.fd, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
