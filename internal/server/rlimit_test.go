package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
)

// limitError recognises a process limit however it reaches the server:
// its own system calls (wrapped), or the holder's answer, which is text.
func TestLimitError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string // the message's start; "" = not a limit
	}{
		{fmt.Errorf("holder: spawn: %w", &os.SyscallError{Syscall: "pipe2", Err: syscall.EMFILE}), "too many open files: the server's file limit (ulimit -n) is "},
		{fmt.Errorf("holder: start x: %w", &fs.PathError{Op: "fork/exec", Path: "/x", Err: syscall.EMFILE}), "too many open files: the server's file limit (ulimit -n) is "},
		{errors.New("holder: open holder log: open /s/holder.log: too many open files"), "too many open files: the server's file limit (ulimit -n) is "},
		{fmt.Errorf("session: dial holder: %w", &os.SyscallError{Syscall: "socket", Err: syscall.ENFILE}), "too many open files in the system: the kernel's limit (sysctl fs.file-max)"},
		{fmt.Errorf("holder: start x: %w", &fs.PathError{Op: "fork/exec", Path: "/x", Err: syscall.EAGAIN}), "too many processes: "},
		{errors.New("start cat: fork/exec /usr/bin/cat: resource temporarily unavailable"), "too many processes: "},
		{errors.New("start nosuch: exec: \"nosuch\": executable file not found in $PATH"), ""},
		{&os.SyscallError{Syscall: "read", Err: syscall.EAGAIN}, ""}, // would block: not a fork
		{nil, ""},
	} {
		le := limitError(tc.err)
		switch {
		case tc.want == "" && le != nil:
			t.Errorf("%v: %q, want no limit", tc.err, le)
		case tc.want != "" && (le == nil || !strings.HasPrefix(le.Error(), tc.want)):
			t.Errorf("%v: %v, want it to start %q", tc.err, le, tc.want)
		case le != nil && tc.err != nil && !errors.Is(le, tc.err):
			t.Errorf("%v: the limit error does not wrap it", tc.err)
		}
	}
}
