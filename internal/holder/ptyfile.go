package holder

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// pollable returns a non-blocking twin of the pty master f, registered with
// Go's network poller, and closes f.
//
// creack/pty leaves the master in blocking mode (its ioctls go through
// (*os.File).Fd, which switches a file to blocking). A blocking read ties up
// an OS thread and, with the holder running on one P, keeps the scheduler
// from running the goroutine that forwards input until the runtime notices
// the stalled syscall — tens of microseconds to milliseconds on every
// keystroke. Through the poller, a read parks only its goroutine.
//
// The twin must never have Fd called on it (that would make it blocking
// again): ioctls go through ioctlWinsize and foreground below.
func pollable(f *os.File) (*os.File, error) {
	nfd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return f, fmt.Errorf("holder: dup pty master: %w", err)
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return f, fmt.Errorf("holder: pty master non-blocking: %w", err)
	}
	unix.CloseOnExec(nfd)
	f.Close() // the open file description lives on in nfd
	return os.NewFile(uintptr(nfd), "/dev/ptmx"), nil
}

// control runs fn with f's descriptor without making it blocking.
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// setWinsize sets the pty's size.
func setWinsize(f *os.File, cols, rows uint16) error {
	return control(f, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows})
	})
}

// foreground returns the pty's foreground process group.
func foreground(f *os.File) (int, error) {
	var pgrp int
	err := control(f, func(fd int) error {
		var err error
		pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	})
	return pgrp, err
}
