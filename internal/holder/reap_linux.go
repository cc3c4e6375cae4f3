//go:build linux

package holder

import (
	"errors"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// reap waits for the holder to exit and reaps it without holding a thread:
// a pidfd becomes readable when its process exits, so the runtime's poller
// waits on it, and waitid then reaps. (exec.Cmd.Wait blocks a thread in
// waitid: a server with hundreds of holders would keep that many threads.)
// A kernel without non-blocking pidfds (before 5.10) gets the thread.
func reap(cmd *exec.Cmd) error {
	fd, err := unix.PidfdOpen(cmd.Process.Pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return cmd.Wait()
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return cmd.Wait()
	}
	var werr error
	err = rc.Read(func(fd uintptr) bool {
		for {
			var info unix.Siginfo
			werr = unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG, nil)
			switch {
			case errors.Is(werr, unix.EINTR):
				continue
			case errors.Is(werr, unix.EAGAIN), werr == nil && info.Signo == 0:
				// Still running (WNOHANG finds no state change; some
				// kernels say EAGAIN): wait until the pidfd is readable.
				return false
			}
			return true
		}
	})
	if err == nil {
		err = werr
	}
	cmd.Process.Release()
	return err
}
