//go:build !linux && !darwin && !freebsd

package peercred

func fdUID(int) (int, error) { return -1, ErrUnsupported }
