package outlog

import "sync"

// scanBufSize is the read size of header scans: large enough that a
// segment of a few MiB is walked in a few dozen reads.
const scanBufSize = 64 << 10

// A scanBuf is a scanner's read buffer. A scan reads up to all of it at
// once, so a buffer on the Go heap, kept in the pool, would keep every
// page a scan ever touched resident; in a holder, whose heap is never
// collected while it idles (a collection's own bookkeeping would cost it
// more than the garbage), for the process's life: 64 KiB to 128 KiB more
// for a holder that opened an old log (a restore). Where the system
// allows (scanbuf_unix.go), the buffer is mapped outside the heap and
// its pages are handed back when a scan ends, to be touched again by the
// next: one call per scan, not per read.
type scanBuf struct {
	b      []byte
	mapped bool // b is a mapping of its own, handed back by handBack
}

var scanBufs = sync.Pool{New: func() any { return newScanBuf() }}
