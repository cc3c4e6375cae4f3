//go:build !linux

package procinfo

// Walk calls fn for every process; elsewhere than Linux it cannot.
func Walk(fn func(pid int, stat []byte)) error { return ErrUnsupported }
