//go:build unix

package outlog

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// newScanBuf maps a buffer of its own, unmapped once the pool drops it
// (a collection); a heap buffer when the mapping fails.
func newScanBuf() *scanBuf {
	b, err := unix.Mmap(-1, 0, scanBufSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return &scanBuf{b: make([]byte, scanBufSize)}
	}
	sb := &scanBuf{b: b, mapped: true}
	runtime.AddCleanup(sb, func(b []byte) { unix.Munmap(b) }, b)
	return sb
}

// handBack gives the buffer's pages back to the system (MADV_DONTNEED:
// they read as zeros, or as they were, when next touched; a scan reads
// before it looks). A heap buffer keeps them.
func (sb *scanBuf) handBack() {
	if sb.mapped {
		unix.Madvise(sb.b, unix.MADV_DONTNEED)
	}
}
