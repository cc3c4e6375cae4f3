package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// openTerminal opens the terminal that in and out both are once more, as a
// file of attach's own: non-blocking, so that its reads and writes wait in
// the runtime's poller and can be raw calls (rawio.ReadWriter), without changing
// the flags of the file in and out share with the shell (each open of a
// terminal has flags of its own). It returns nil when in and out are not
// one terminal, or when the terminal cannot be opened again; attach then
// uses in and out as they are.
func openTerminal(in, out *os.File) *os.File {
	var a, b syscall.Stat_t
	if syscall.Fstat(int(in.Fd()), &a) != nil || syscall.Fstat(int(out.Fd()), &b) != nil ||
		a.Mode&syscall.S_IFMT != syscall.S_IFCHR || a.Rdev != b.Rdev {
		return nil
	}
	path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(in.Fd())))
	if err != nil {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	// The path names the same terminal unless it was replaced meanwhile.
	rc, err := f.SyscallConn()
	var c syscall.Stat_t
	if err == nil {
		err = rc.Control(func(fd uintptr) { err = syscall.Fstat(int(fd), &c) })
	}
	if err != nil || c.Rdev != a.Rdev || c.Mode&syscall.S_IFMT != syscall.S_IFCHR {
		f.Close()
		return nil
	}
	return f
}

// ttyName is the path of the terminal on in ("/dev/pts/3"), or "a
// terminal" when it cannot be found: how attach is shown to the session's
// other viewers.
func ttyName(in *os.File) string {
	if path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(in.Fd()))); err == nil && strings.HasPrefix(path, "/dev/") {
		return path
	}
	return "a terminal"
}
