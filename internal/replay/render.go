// Package replay shows a session's past from its output log: the screen
// at any offset (Render), a timeline of the log with its command, restore
// and gap markers (Index), and the log's chunks with their times for
// playing it back (Output). It also owns the screen checkpoint files:
// the server's screen.ckpt and the series of replay checkpoints renders
// start from.
//
// What it guarantees:
//
//   - Render's screen at offset X is the server's screen model's at X: the
//     same emulator fed the same bytes at the same sizes (a size change at
//     X included). It starts from the newest replay checkpoint at or before
//     X that the log still has the bytes after (SaveCheckpoint: the screen
//     model writes one every 4 MiB of output), so it reads at most that
//     much log. Two things differ on purpose: a gap in the log is shown as
//     export shows it, a line such as
//     "[termkeep: 1234 bytes not logged (disk full)]", never glued over;
//     and a checkpoint keeps 1,000 lines of history, so from one on the
//     history is full at 1,000 lines (the server's holds 10,000).
//   - It reads the log only through outlog's reading API, and writes only
//     the checkpoint files (SaveCheckpoint, Prune, WriteCheckpoint). No
//     network, no registry, no goroutines.
//   - An emulator panic is an error, never a crash of the caller.
package replay

import (
	"errors"
	"fmt"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/screen"
)

// Log is what replay reads of a session's output log.
type Log interface {
	First() uint64
	End() uint64
	SizeAt(off uint64) (cols, rows uint16, err error)
	Chunks(lo, hi uint64, fn func(outlog.Chunk) error) error
}

var _ Log = (*outlog.Log)(nil)

// ErrRange is wrapped by Render's error for an offset outside the log's
// [First, End].
var ErrRange = errors.New("replay: offset outside the retained log")

// Moment is the screen at an offset of the output.
type Moment struct {
	Screen *screen.Screen
	Offset uint64    // the screen reflects every byte below Offset
	Time   time.Time // when the byte at Offset-1 was logged; zero when the log does not say
}

// Render returns the screen at offset at, which must be within the log's
// [First, End]: the newest replay checkpoint of sessionDir in [First, at]
// (an unreadable one is passed over for the one before), or else an empty
// screen at First at the size in force there, fed the log up to at.
func Render(l Log, sessionDir string, at uint64) (Moment, error) {
	first, end := l.First(), l.End()
	if at < first || at > end {
		return Moment{}, fmt.Errorf("%w: %d is not in [%d, %d]", ErrRange, at, first, end)
	}
	scr, from, err := start(l, sessionDir, first, at)
	if err != nil {
		return Moment{}, err
	}
	f := &feeder{scr: scr}
	if err := f.feed(l, from, at); err != nil {
		return Moment{}, err
	}
	m := Moment{Screen: scr, Offset: at, Time: f.last}
	if from == at && at > first {
		// Nothing was fed: the checkpoint is at the moment itself.
		m.Time, err = TimeOf(l, at-1)
	}
	return m, err
}

// start returns the screen to render from and the offset it reflects.
func start(l Log, sessionDir string, first, at uint64) (*screen.Screen, uint64, error) {
	offs, err := Checkpoints(sessionDir)
	if err != nil {
		return nil, 0, err
	}
	for i := len(offs) - 1; i >= 0; i-- {
		off := offs[i]
		if off > at {
			continue
		}
		if off < first {
			break
		}
		// Pruned or torn since the listing: the one before will do.
		if scr, got, err := ReadCheckpoint(checkpointPath(sessionDir, off)); err == nil && got == off {
			return scr, off, nil
		}
	}
	cols, rows, err := l.SizeAt(first)
	if err != nil {
		return nil, 0, fmt.Errorf("replay: size at %d: %w", first, err)
	}
	return screen.New(int(cols), int(rows), screen.Options{}), first, nil
}

// feeder writes the log's chunks into a screen as the screen model and
// export's txt do: each size change before the bytes after it, and a gap
// as a line of its own.
type feeder struct {
	scr  *screen.Screen
	last time.Time // the time of the last chunk fed
}

// feed writes [from, to) of l into the screen.
func (f *feeder) feed(l Log, from, to uint64) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("replay: the terminal emulator failed: %v", p)
		}
	}()
	return l.Chunks(from, to, f.chunk)
}

func (f *feeder) chunk(c outlog.Chunk) error {
	switch c.Kind {
	case outlog.ChunkSize:
		if cols, rows := f.scr.Size(); cols != int(c.Cols) || rows != int(c.Rows) {
			f.scr.Resize(int(c.Cols), int(c.Rows))
		}
		return nil
	case outlog.ChunkData:
		f.scr.Write(c.Data)
	case outlog.ChunkGap:
		f.scr.Write(outlog.ScreenBytes(outlog.GapOf(c).Line()))
	}
	if !c.Time.IsZero() {
		f.last = c.Time
	}
	return nil
}

// TimeOf returns when the byte at off was logged (the Time record before
// it), or the zero time when the log does not say.
func TimeOf(l Log, off uint64) (time.Time, error) {
	var t time.Time
	err := l.Chunks(off, off+1, func(c outlog.Chunk) error {
		if c.Kind != outlog.ChunkSize {
			t = c.Time
		}
		return nil
	})
	return t, err
}
