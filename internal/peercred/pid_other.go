//go:build !linux && !darwin

package peercred

// FreeBSD's xucred carries the pid only in a union x/sys/unix leaves out.
func fdPID(int) (int, error) { return 0, ErrUnsupported }
