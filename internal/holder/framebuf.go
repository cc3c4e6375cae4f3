package holder

import (
	"os"

	"golang.org/x/sys/unix"

	"termkeep/internal/wire"
)

// frameBuffer is the forwarder's buffer: room for an Output frame's header
// and up to frameData bytes read from the log behind it. Large frames keep
// a server that catches up, and its viewers, at few frames per MiB; but a
// buffer on the Go heap would keep every page a burst touched resident for
// the holder's life. This one is mapped outside the heap, and once the
// stream has caught up the pages past the first keepResident bytes are
// handed back (MADV_DONTNEED: they read as zeros when next touched).
type frameBuffer struct {
	b      []byte
	high   int // bytes of b touched since the last release
	keep   int // page-aligned: the part that stays resident
	mapped bool
}

// keepResident is the part a burst leaves resident: more than a pty's
// read gives at once (4 KiB), so a stream of output that keeps up (one
// chunk a frame) never hands pages back and touches them again; only a
// burst that fell behind, whose frames grew past it, does, once, when it
// has caught up.
const (
	frameData    = 256 << 10
	keepResident = 16 << 10
)

func newFrameBuffer() *frameBuffer {
	size := wire.OutputHeaderSize + frameData
	page := os.Getpagesize()
	keep := (wire.OutputHeaderSize + keepResident + page - 1) &^ (page - 1)
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return &frameBuffer{b: make([]byte, size), keep: size}
	}
	return &frameBuffer{b: b, keep: keep, mapped: true}
}

// used notes that the first n bytes of the buffer were written.
func (f *frameBuffer) used(n int) { f.high = max(f.high, n) }

// release hands back what a burst touched past the resident part.
func (f *frameBuffer) release() {
	if !f.mapped || f.high <= f.keep {
		return
	}
	unix.Madvise(f.b[f.keep:], unix.MADV_DONTNEED)
	f.high = 0
}

func (f *frameBuffer) close() {
	if f.mapped {
		unix.Munmap(f.b)
		f.b, f.mapped = nil, false
	}
}
