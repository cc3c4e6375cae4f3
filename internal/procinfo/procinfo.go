// Package procinfo reads what the operating system knows about a process
// that its own output does not say, such as its working directory. Linux
// reads /proc; elsewhere the calls report ErrUnsupported and callers fall
// back to what the process tells them (OSC 7).
package procinfo

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// ErrUnsupported is returned where the system offers no way to know.
var ErrUnsupported = errors.New("procinfo: not supported on this system")

// Cwd returns the working directory of process pid.
func Cwd(pid int) (string, error) { return cwd(pid) }

// Cmdline returns the arguments process pid was started with.
func Cmdline(pid int) ([]string, error) { return cmdline(pid) }

// Parent returns the pid of process pid's parent.
func Parent(pid int) (int, error) { return parent(pid) }

// parsePPid finds the parent's pid in the text of /proc/<pid>/status: the
// line "PPid:\t<pid>".
func parsePPid(status []byte) (int, error) {
	for len(status) > 0 {
		line := status
		if i := bytes.IndexByte(status, '\n'); i >= 0 {
			line, status = status[:i], status[i+1:]
		} else {
			status = nil
		}
		v, ok := bytes.CutPrefix(line, []byte("PPid:"))
		if !ok {
			continue
		}
		n, err := strconv.Atoi(string(bytes.TrimSpace(v)))
		if err != nil || n < 0 {
			return 0, fmt.Errorf("procinfo: bad PPid line %q", line)
		}
		return n, nil
	}
	return 0, errors.New("procinfo: no PPid line")
}
