// Package offheap gives byte buffers mapped outside the Go heap, where the
// system allows, whose pages can be handed back. A buffer on the heap keeps
// every page it ever touched resident while it lives, and a holder's heap
// is never collected while it idles (a collection's own bookkeeping would
// cost it more than the garbage).
package offheap

// Buf is such a buffer.
type Buf struct {
	B      []byte
	Mapped bool // B is a mapping of its own; false: on the heap (no mapping here, or it failed)
}
