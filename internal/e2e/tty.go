package e2e

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// WaitRaw waits until session ref's child has put its terminal in raw mode
// (echo off). A child that waits for the test's go sees it only once it is
// raw: sent earlier, the go is echoed by the pty into the output the test
// compares byte for byte.
func (e *Env) WaitRaw(ref string) {
	e.T.Helper()
	s := e.Session(ref)
	if s.Pid == nil {
		e.T.Fatalf("session %s has no pid: %+v", ref, s)
	}
	tty := fmt.Sprintf("/proc/%d/fd/0", *s.Pid)
	WaitFor(e.T, 20*time.Second, "session "+ref+"'s terminal in raw mode", func() bool {
		f, err := os.OpenFile(tty, os.O_RDONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return false
		}
		defer f.Close()
		tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		return err == nil && tio.Lflag&unix.ECHO == 0
	})
}
