package session

import (
	"errors"
	"os"
	"syscall"
)

// outOfFiles reports whether this process cannot open a file right now
// (EMFILE: its descriptor limit; ENFILE: the system's). Meanwhile meta.json
// cannot be read nor the holder dialed, so a host that loses its holder
// waits for a descriptor rather than call a running session interrupted.
func outOfFiles() bool {
	f, err := os.Open(os.DevNull)
	if err == nil {
		f.Close()
		return false
	}
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
