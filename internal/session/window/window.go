// Package window keeps the newest output of a session in memory, so that
// viewers following live output, and the screen model, copy it from there
// instead of reading the log on disk.
//
// A Window holds a contiguous run of the output ending at End: every byte
// it returns is the byte the session printed at that offset. It never holds
// more than its capacity (but for one chunk larger than that), and it hands
// out slices that nothing writes to again, so a reader may keep using them
// after it lets go of the lock that guards the window.
//
// A Window is not safe for concurrent use: its owner guards it with a
// mutex of its own (the session host's).
package window

import (
	"bytes"
	"slices"
)

// Block is the size of the blocks the window gathers small chunks into.
// Output a line at a time (a shell, a log being tailed, an agent
// streaming) arrives in chunks of a hundred bytes; kept one by one, they
// cost a slice and an allocation each, nearly as much again as the bytes.
const Block = 16 << 10

// firstBlock is a new block's size: blocks grow from it, so a session that
// printed a prompt and went quiet holds no Block for it.
const firstBlock = 512

// Window is the newest output of a session, ending at End. The zero value
// is an empty window at offset 0 with no capacity: use New.
type Window struct {
	capacity int
	end      uint64
	chunks   []chunk // contiguous, ending at end
	n        int     // bytes in chunks
}

type chunk struct {
	off  uint64
	data []byte
	// block: data is a Block of the window's own, which later small chunks
	// are appended to while it has room.
	block bool
}

// New returns an empty window at offset 0 that keeps about capacity bytes.
func New(capacity int) *Window { return &Window{capacity: capacity} }

// End returns the offset after the newest byte appended.
func (w *Window) End() uint64 { return w.end }

// First returns the offset of the oldest byte the window holds (End when
// it holds none).
func (w *Window) First() uint64 {
	if len(w.chunks) == 0 {
		return w.end
	}
	return w.chunks[0].off
}

// Len returns how many bytes the window holds.
func (w *Window) Len() int { return w.n }

// Chunks returns how many chunks the window holds the bytes in (what they
// cost beyond the bytes themselves).
func (w *Window) Chunks() int { return len(w.chunks) }

// Reset empties the window; output continues at end.
func (w *Window) Reset(end uint64) {
	w.end, w.chunks, w.n = end, nil, 0
}

// Append adds the output at off. Bytes below End are a duplicate (output
// sent again after a reconnect) and are skipped; output beyond End (a hole
// its sender reports as a gap) empties the window first. It returns how
// many bytes it added, and whether it keeps data itself: the caller must
// then never write to data again; otherwise it copied what it keeps, and
// the caller may reuse data's buffer.
func (w *Window) Append(off uint64, data []byte) (added int, kept bool) {
	if len(data) == 0 || off+uint64(len(data)) <= w.end {
		return 0, false
	}
	if off > w.end {
		w.Reset(off)
	} else if off < w.end {
		data = data[w.end-off:]
		off = w.end
	}
	n := len(w.chunks)
	switch {
	case n > 0 && w.chunks[n-1].block && cap(w.chunks[n-1].data)-len(w.chunks[n-1].data) >= len(data):
		// Into the newest block's room: bytes no reader has been given
		// (Read hands out slices capped at their length).
		w.chunks[n-1].data = append(w.chunks[n-1].data, data...)
	case len(data) <= Block/4:
		size := firstBlock
		if n > 0 && w.chunks[n-1].block {
			size = min(2*cap(w.chunks[n-1].data), Block)
		}
		b := make([]byte, len(data), max(size, 2*len(data)))
		copy(b, data)
		w.chunks = append(w.chunks, chunk{off: off, data: b, block: true})
	case cap(data) > 2*len(data):
		// A short chunk in a large frame buffer would pin all of it: the
		// capacity counts what the window holds, not what it keeps alive.
		w.chunks = append(w.chunks, chunk{off: off, data: bytes.Clone(data)})
	default:
		w.chunks = append(w.chunks, chunk{off: off, data: data})
		kept = true
	}
	w.n += len(data)
	for w.n > w.capacity && len(w.chunks) > 1 {
		w.n -= len(w.chunks[0].data)
		w.chunks[0] = chunk{}
		w.chunks = w.chunks[1:]
	}
	w.end = off + uint64(len(data))
	return len(data), kept
}

// Read returns the bytes from off on, at most max of them, as slices of
// the window's chunks, each capped at its length. It returns nil when the
// window does not hold off: below First (dropped, or never held) or at or
// beyond End. The slices are never written to again; the caller must not
// write to them either.
func (w *Window) Read(off uint64, max int) [][]byte {
	if off >= w.end || len(w.chunks) == 0 || off < w.chunks[0].off || max <= 0 {
		return nil
	}
	// Find the chunk holding off, from the newest: readers are mostly live.
	i := len(w.chunks) - 1
	for i > 0 && w.chunks[i].off > off {
		i--
	}
	var parts [][]byte
	n := 0
	for ; i < len(w.chunks) && n < max; i++ {
		c := w.chunks[i]
		d := c.data
		if off > c.off {
			d = d[off-c.off:]
		}
		if n+len(d) > max {
			d = d[:max-n]
		}
		parts = append(parts, d[:len(d):len(d)])
		n += len(d)
	}
	return parts
}

// Shrink drops the oldest chunks while more than keep bytes would remain,
// and lets go of the old backing array when it dropped any. It returns how
// many bytes it dropped.
func (w *Window) Shrink(keep int) (freed int) {
	i := 0
	for i < len(w.chunks)-1 && w.n-len(w.chunks[i].data) >= keep {
		w.n -= len(w.chunks[i].data)
		freed += len(w.chunks[i].data)
		i++
	}
	if i > 0 {
		w.chunks = slices.Clone(w.chunks[i:])
	}
	return freed
}
