package holder

import (
	"syscall"

	"path/filepath"

	"termkeep/internal/procinfo"
)

// IsHolder reports whether process pid runs a termkeep holder (the
// termkeep-holder binary, or termkeep in its hidden holder mode), not merely
// a process that was given the pid of one that ended. Where the system
// cannot tell, it says no: a signal to a stranger is worse than a holder
// left alone.
func IsHolder(pid int) bool {
	if pid <= 0 {
		return false
	}
	argv, err := procinfo.Cmdline(pid)
	if err != nil || len(argv) == 0 {
		return false
	}
	return filepath.Base(argv[0]) == "termkeep-holder" || (len(argv) > 1 && argv[1] == "__holder")
}

// CloseSignal asks a holder to close its session on purpose, as a Close
// frame does: SIGHUP to the child, SIGKILL after a grace, recorded
// "closed". It is how the server ends a holder it cannot reach through its
// socket. SIGTERM is not: it comes from whoever stops the machine or the
// service, and a holder records it as "interrupted".
const CloseSignal = syscall.SIGUSR1

// closeSignalSince is the protocol version of the first holders that take
// CloseSignal.
const closeSignalSince = 3

// CloseSignalFor is the signal that asks a holder of protocol version
// (its meta.json's) to close its session on purpose. Holders before
// CloseSignal close on SIGTERM, and ignore CloseSignal.
func CloseSignalFor(version int) syscall.Signal {
	if version < closeSignalSince {
		return syscall.SIGTERM
	}
	return CloseSignal
}
