//go:build !linux

package holder

import (
	"errors"
	"syscall"

	"termkeep/internal/wire"
)

// readTermMode: whether a pty's master side reports its terminal side's
// settings is not known here, so the mode stays unknown (no prediction).
func readTermMode(syscall.RawConn) (wire.TermMode, error) {
	return wire.TermMode{}, errors.New("holder: the pty's mode is not known on this system")
}
