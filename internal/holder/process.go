package holder

import (
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
