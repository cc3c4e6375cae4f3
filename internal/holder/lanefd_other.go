//go:build !linux

package holder

import (
	"syscall"

	"termkeep/internal/rawio"
)

// fdReader elsewhere reads plainly: descriptors that came with the bytes
// are closed by the kernel, and every lane ends at once at its start.
type fdReader struct{ rw rawio.ReadWriter }

func newFDReader(rc syscall.RawConn) *fdReader { return &fdReader{rw: rawio.NewReadWriter(rc)} }

func (r *fdReader) Read(p []byte) (int, error) { return r.rw.Read(p) }
func (r *fdReader) take() int                  { return -1 }
func (r *fdReader) close()                     {}

func nonBlockingTerminal(fd int) bool { return false }
