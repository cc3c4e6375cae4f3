//go:build unix

package offheap

import "golang.org/x/sys/unix"

// New returns a buffer of size bytes: a mapping of its own, or on the heap
// when the mapping fails.
func New(size int) *Buf {
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return &Buf{B: make([]byte, size)}
	}
	return &Buf{B: b, Mapped: true}
}

// HandBack gives the pages of B[from:] back to the system (MADV_DONTNEED:
// they read as zeros when next touched). A heap buffer keeps them.
func (b *Buf) HandBack(from int) {
	if b.Mapped {
		unix.Madvise(b.B[from:], unix.MADV_DONTNEED)
	}
}

// Free unmaps the buffer; it is not used after.
func (b *Buf) Free() {
	if b.Mapped {
		unix.Munmap(b.B)
	}
	b.B, b.Mapped = nil, false
}
