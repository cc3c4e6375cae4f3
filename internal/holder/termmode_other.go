//go:build !linux

package holder

import (
	"errors"

	"termkeep/internal/wire"
)

// ptyMode: whether a pty's master side reports its terminal side's
// settings is not known here, so the mode stays unknown (no prediction).
func ptyMode(uintptr) (wire.TermMode, error) {
	return wire.TermMode{}, errors.New("holder: the pty's mode is not known on this system")
}
