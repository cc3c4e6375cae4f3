//go:build linux

package holder

import (
	"errors"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// reap waits for cmd's process (a holder, or a holder's child) to exit and
// reaps it without holding a thread while it runs (awaitExit), its status
// in cmd.ProcessState. exec.Cmd.Wait alone blocks a thread in waitid: a
// server with hundreds of holders would keep that many threads.
func reap(cmd *exec.Cmd) error {
	awaitExit(cmd)
	return cmd.Wait()
}

// awaitExit returns once cmd's process has exited, leaving it to be
// reaped (cmd.Wait then returns at once, with its status). A pidfd becomes
// readable when its process exits, so the runtime's poller waits on it, and
// no thread does. A kernel without non-blocking pidfds (before 5.10)
// returns at once, and cmd.Wait does the waiting.
func awaitExit(cmd *exec.Cmd) {
	fd, err := unix.PidfdOpen(cmd.Process.Pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Read(func(fd uintptr) bool {
		for {
			var info unix.Siginfo
			// WNOWAIT: look, and leave the exited process to cmd.Wait.
			err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.EAGAIN), err == nil && info.Signo == 0:
				// Still running (WNOHANG finds no state change; some
				// kernels say EAGAIN): wait until the pidfd is readable.
				return false
			}
			return true
		}
	})
}
