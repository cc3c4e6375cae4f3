//go:build !unix

package offheap

// New returns a buffer of size bytes on the heap: no mapping here.
func New(size int) *Buf { return &Buf{B: make([]byte, size)} }

// HandBack does nothing: a heap buffer keeps its pages.
func (b *Buf) HandBack(from int) {}

// Free lets the buffer go.
func (b *Buf) Free() { b.B = nil }
