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

// Gap is a range of the log whose bytes a reader cannot have, and why: what
// an export, a replay or a search shows in their place, so that the bytes on
// either side are never glued together.
type Gap struct {
	Start, End uint64
	Reason     string // what happened to them: "not logged (disk full)", "no longer retained", ...
}

// GapOf describes a ChunkGap chunk: its range and what happened to its
// bytes.
func GapOf(c Chunk) Gap {
	g := Gap{Start: c.Offset, End: c.End}
	var ge *GapError
	switch {
	case errors.As(c.Err, &ge):
		g.Reason = "not logged"
		if ge.Reason != "" {
			g.Reason += " (" + ge.Reason + ")"
		}
	case errors.Is(c.Err, ErrCompacted):
		g.Reason = "no longer retained"
	case errors.Is(c.Err, ErrCorrupt):
		g.Reason = "lost to a damaged log segment"
	default:
		g.Reason = "missing from the log"
	}
	return g
}

// Line is the line shown in a gap's place.
func (g Gap) Line() string {
	n := g.End - g.Start
	unit := "bytes"
	if n == 1 {
		unit = "byte"
	}
	return fmt.Sprintf("[termkeep: %d %s %s]", n, unit, g.Reason)
}

// ScreenBytes is what a terminal emulator is fed in a gap's place: CAN
// (ending an escape sequence the gap cut), then line on a line of its own.
func ScreenBytes(line string) []byte { return []byte("\x18\r\n" + line + "\r\n") }
