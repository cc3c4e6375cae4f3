package holder

import (
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"termkeep/internal/procinfo"
)

// ptsDevice is the device number of the terminal side of the pty master
// f (0: unknown).
func ptsDevice(f *os.File) uint64 {
	var n uint32
	if err := control(f, func(fd int) error {
		var err error
		n, err = unix.IoctlGetUint32(fd, unix.TIOCGPTN)
		return err
	}); err != nil {
		return 0
	}
	var st unix.Stat_t
	if err := unix.Stat("/dev/pts/"+strconv.Itoa(int(n)), &st); err != nil {
		return 0
	}
	return st.Rdev
}

// ptyProcesses lists the processes, other than this one, whose
// controlling terminal is the device dev or that hold it open. Only the
// holder's user's processes can be seen (and signalled).
func ptyProcesses(dev uint64) []int {
	if dev == 0 {
		return nil
	}
	major, minor := unix.Major(dev), unix.Minor(dev)
	self := os.Getpid()
	var pids []int
	procinfo.Walk(func(pid int, stat []byte) {
		if pid == self {
			return
		}
		if nr, ok := procinfo.StatTTY(stat); ok && nr != 0 {
			if ma, mi := procinfo.TTYDevice(nr); ma == major && mi == minor {
				pids = append(pids, pid)
				return
			}
		}
		if holdsDevice("/proc/"+strconv.Itoa(pid)+"/fd", dev) {
			pids = append(pids, pid)
		}
	})
	return pids
}

// holdsDevice reports whether one of the descriptors in fdDir (a
// /proc/<pid>/fd) is the device dev.
func holdsDevice(fdDir string, dev uint64) bool {
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		var st unix.Stat_t
		if unix.Stat(filepath.Join(fdDir, fd.Name()), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == dev {
			return true
		}
	}
	return false
}
