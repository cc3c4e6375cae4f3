package replay

import (
	"errors"

	"termkeep/internal/outlog"
)

// Output calls fn with the chunks of [from, to) (to clamped to the log's
// End) as outlog.Log.Chunks walks them: the size in force at from first,
// the size at each change, each logged chunk, each gap. It stops after the
// chunk that brings the data past max bytes, so an answer stays bounded
// and ends on a chunk's boundary, and returns where the walk stopped: to
// (or End) when it went through. The size changes logged where it stops
// are in the answer (the next one, from there, starts at the size they
// leave): a shrink and a grow at one offset are both played, whichever
// answer they fall at the end of. fn must not retain a chunk's Data.
func Output(l Log, from, to uint64, max int, fn func(outlog.Chunk) error) (next uint64, err error) {
	next = min(to, l.End())
	sent, full := 0, false
	err = l.Chunks(from, to, func(c outlog.Chunk) error {
		if full && (c.Kind != outlog.ChunkSize || c.Offset != next) {
			return errFull
		}
		if err := fn(c); err != nil {
			return err
		}
		if c.Kind != outlog.ChunkData || full {
			return nil
		}
		sent += len(c.Data)
		if sent >= max {
			next, full = c.Offset+uint64(len(c.Data)), true
		}
		return nil
	})
	if errors.Is(err, errFull) {
		err = nil
	}
	return next, err
}

// errFull stops Output's walk once it has sent enough.
var errFull = errors.New("replay: answer full")
