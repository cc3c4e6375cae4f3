package holder

import (
	"os"

	"termkeep/internal/offheap"
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
	m    *offheap.Buf
	b    []byte // m's
	high int    // bytes of b touched since the last release
	keep int    // page-aligned: the part that stays resident
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
	m := offheap.New(wire.OutputHeaderSize + frameData)
	page := os.Getpagesize()
	keep := (wire.OutputHeaderSize + keepResident + page - 1) &^ (page - 1)
	if !m.Mapped {
		keep = len(m.B)
	}
	return &frameBuffer{m: m, b: m.B, keep: keep}
}

// used notes that the first n bytes of the buffer were written.
func (f *frameBuffer) used(n int) { f.high = max(f.high, n) }

// release hands back what a burst touched past the resident part.
func (f *frameBuffer) release() {
	if f.high <= f.keep {
		return
	}
	f.m.HandBack(f.keep)
	f.high = 0
}

func (f *frameBuffer) close() {
	f.m.Free()
	f.b = nil
}
