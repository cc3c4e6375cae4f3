package outlog

import (
	"runtime"
	"sync"

	"termkeep/internal/offheap"
)

// scanBufSize is the read size of header scans: large enough that a
// segment of a few MiB is walked in a few dozen reads.
const scanBufSize = 64 << 10

// A scanBuf is a scanner's read buffer. A scan reads up to all of it at
// once, so a buffer on the Go heap, kept in the pool, would keep every
// page a scan ever touched resident; in a holder, for the process's life:
// 64 KiB to 128 KiB more for a holder that opened an old log (a restore).
// The buffer is mapped outside the heap where the system allows, unmapped
// once the pool drops it, and its pages are handed back when a scan ends,
// to be touched again by the next: one call per scan, not per read.
type scanBuf struct {
	*offheap.Buf
}

var scanBufs = sync.Pool{New: func() any {
	m := offheap.New(scanBufSize)
	sb := &scanBuf{m}
	runtime.AddCleanup(sb, (*offheap.Buf).Free, m)
	return sb
}}
