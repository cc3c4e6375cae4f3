//go:build !linux

package rawio

import (
	"runtime"
	"syscall"
)

func read(fd uintptr, p []byte) (int, error) {
	n, err := syscall.Read(int(fd), p)
	return max(n, 0), err
}

func write(fd uintptr, p []byte) (int, error) {
	n, err := syscall.Write(int(fd), p)
	return max(n, 0), err
}

func pread(fd uintptr, p []byte, off int64) (int, error) {
	n, err := syscall.Pread(int(fd), p, off)
	return max(n, 0), err
}

// Yield gives the CPU to another goroutine or thread.
func Yield() { runtime.Gosched() }
