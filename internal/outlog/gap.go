package outlog

import (
	"errors"
	"fmt"
)

// ErrGap is matched (errors.Is) by a *GapError.
var ErrGap = errors.New("outlog: bytes were never logged")

// GapError is returned by Cursor.Read at an offset whose bytes the session
// produced but the log could not keep: they went by while the log was stopped
// (a full disk, a failing file system). The stream's offsets go on across a
// gap; only its bytes are missing. Read moves the cursor to End, so reading
// on continues after the gap.
type GapError struct {
	Start, End uint64 // the missing bytes are [Start, End)
	Reason     string // why, when the log recorded it ("disk full")
}

func (e *GapError) Error() string {
	msg := fmt.Sprintf("outlog: bytes %d-%d were not logged", e.Start, e.End)
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg
}

func (e *GapError) Is(target error) bool { return target == ErrGap }
