//go:build !linux

package fdpass

import (
	"syscall"

	"termkeep/internal/rawio"
)

// Reader elsewhere reads plainly: descriptors that came with the bytes
// are closed by the kernel, and every lane ends at once at its start.
type Reader struct{ rw rawio.ReadWriter }

func NewReader(rc syscall.RawConn) *Reader { return &Reader{rw: rawio.NewReadWriter(rc)} }

func (r *Reader) Read(p []byte) (int, error) { return r.rw.Read(p) }
func (r *Reader) Take() int                  { return -1 }
func (r *Reader) Close()                     {}

func NonBlockingTerminal(fd int) bool { return false }
