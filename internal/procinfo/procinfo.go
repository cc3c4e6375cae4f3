// Package procinfo reads what the operating system knows about a process
// that its own output does not say, such as its working directory. Linux
// reads /proc; elsewhere the calls report ErrUnsupported and callers fall
// back to what the process tells them (OSC 7).
package procinfo

import "errors"

// ErrUnsupported is returned where the system offers no way to know.
var ErrUnsupported = errors.New("procinfo: not supported on this system")

// Cwd returns the working directory of process pid.
func Cwd(pid int) (string, error) { return cwd(pid) }

// Cmdline returns the arguments process pid was started with.
func Cmdline(pid int) ([]string, error) { return cmdline(pid) }
