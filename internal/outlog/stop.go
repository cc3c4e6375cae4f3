package outlog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"termkeep/internal/rawio"
	"time"
)

// ErrStopped is matched by the error Append returns while the log is
// stopped: the bytes were given their offsets and are kept in memory for
// the writer's cursors, but they are not on disk.
var ErrStopped = errors.New("outlog: logging stopped")

// Stop says that, and why, a log stopped logging.
type Stop struct {
	At     uint64 // the first offset not logged
	Reason string // "disk full", "read-only file system", or the error
	Err    error
}

const (
	// retryEvery spaces a stopped log's attempts to write again.
	retryEvery = time.Second
	// memKeep is how many of the newest unlogged bytes a stopped log keeps
	// for its own cursors: the holder's forwarder reads them moments after
	// they were appended. They are kept for memLinger after logging
	// resumes, for a cursor that was a moment behind.
	memKeep   = 1 << 20
	memLinger = 10 * time.Second
	// resumeFree is the free space a log stopped by a full disk waits for
	// before it writes again: resuming into the last few bytes would stop
	// it again at once, and a stop that flaps every second tells viewers
	// nothing useful.
	resumeFree = 1 << 20
)

// stopReason names a write failure the way a user would say it.
func stopReason(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "disk full"
	case errors.Is(err, syscall.EROFS):
		return "read-only file system"
	case errors.Is(err, syscall.EIO):
		return "I/O error"
	}
	return err.Error()
}

// Stopped returns why and since when the log is not logging, or nil while
// it is.
func (l *Log) Stopped() *Stop {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.stop == nil {
		return nil
	}
	s := *l.stop
	return &s
}

// stopLocked stops the log after a failed write. The write may have left a
// torn record: the tail is cut back to its last whole record now, and again
// before the next attempt in case that failed too. Called with tmu held.
func (l *Log) stopLocked(cause error, now time.Time) {
	if l.tail != nil {
		l.tail.Truncate(l.tailPos)
	}
	l.lastTry = now
	l.mu.Lock()
	if l.stop == nil {
		l.stop = &Stop{At: l.end, Reason: stopReason(cause), Err: cause}
		if l.memStart+uint64(len(l.mem)) != l.end {
			// A new stop, not the next of a series on a nearly full disk
			// whose kept bytes a cursor may still be reading.
			l.mem, l.memStart = l.mem[:0], l.end
		}
		l.memReason = l.stop.Reason
	}
	l.mu.Unlock()
}

// keepLocked gives p its offsets while the log is stopped and keeps the
// newest memKeep bytes for cursors. Called with tmu held.
func (l *Log) keepLocked(p []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mem = append(l.mem, p...)
	l.end += uint64(len(p))
	if drop := len(l.mem) - memKeep; drop > memKeep {
		// Slide in large steps: each byte is moved a bounded number of times.
		l.mem = append(l.mem[:0], l.mem[drop:]...)
		l.memStart += uint64(drop)
	}
	return fmt.Errorf("%w: %s", ErrStopped, l.stop.Reason)
}

// Retry tries to resume a stopped log now, rather than at the next Append
// a second after the last try. It returns nil when the log is logging.
func (l *Log) Retry() error {
	if l.ro {
		return ErrReadOnly
	}
	l.tmu.Lock()
	defer l.tmu.Unlock()
	if l.werr != nil {
		return l.werr
	}
	if l.Stopped() == nil {
		return nil
	}
	now := l.opts.Now()
	l.lastTry = now
	return l.resumeLocked(now)
}

// resumeLocked writes the Gap record for what went by while the log was
// stopped, and the size in force when it changed meanwhile. On success the
// log is logging again; on failure the tail is cut back and it stays
// stopped. Called with tmu held.
func (l *Log) resumeLocked(now time.Time) error {
	l.mu.RLock()
	at, end, reason, cause := l.stop.At, l.end, l.stop.Reason, l.stop.Err
	l.mu.RUnlock()
	if errors.Is(cause, syscall.ENOSPC) {
		if free, ok := l.free(); ok && free < resumeFree {
			return cause
		}
	}
	if l.tail == nil {
		// A roll failed: the next segment starts with the gap.
		if err := l.createTail(at, now); err != nil {
			return err
		}
		l.mu.Lock()
		l.segs = append(l.segs, at)
		l.mu.Unlock()
	} else if err := l.tail.Truncate(l.tailPos); err != nil {
		return fmt.Errorf("outlog: truncate segment %s: %w", segName(l.tailStart), err)
	}
	if err := l.writeGapLocked(end-at, reason, now); err != nil {
		return err
	}
	l.resumedAt = now
	l.mu.Lock()
	l.stop = nil
	l.mu.Unlock()
	return nil
}

// writeGapLocked writes a Time record and a Gap record of n bytes, and the
// size in force when it changed while nothing could be written, in one
// write(2). A failed write is cut back off the tail. It does not move End:
// the caller's offsets already count the gap. Called with tmu held.
func (l *Log) writeGapLocked(n uint64, reason string, now time.Time) error {
	b := appendGap(l.appendTime(l.buf[:0], now), n, reason)
	if l.sizeDirty {
		l.mu.RLock()
		b = appendSize(b, l.cols, l.rows)
		l.mu.RUnlock()
	}
	l.buf = b[:0]
	if _, err := l.tail.Write(b); err != nil {
		l.tail.Truncate(l.tailPos)
		return fmt.Errorf("outlog: write segment %s: %w", segName(l.tailStart), err)
	}
	l.tailPos += int64(len(b))
	l.lastTime = now
	l.dirty = true
	l.sizeDirty = false
	return nil
}

// dropMemLocked lets go of the bytes kept from a stop once no cursor is
// likely to still want them. Called with tmu held.
func (l *Log) dropMemLocked(now time.Time) {
	if l.mem != nil && l.stop == nil && now.Sub(l.resumedAt) >= memLinger {
		l.mu.Lock()
		l.mem, l.memStart = nil, 0
		l.mu.Unlock()
	}
}

// segmentFile is what the log needs of the tail segment's file: an
// *os.File, or in tests one that fails like a full disk.
type segmentFile interface {
	io.Writer
	io.ReaderAt
	Truncate(size int64) error
	Sync() error
	Close() error
	Stat() (fs.FileInfo, error)
}

// free returns the free space of the log's file system, when it can tell.
func (l *Log) free() (int64, bool) {
	if l.freeSpace != nil {
		return l.freeSpace()
	}
	return freeSpace(l.dir)
}

func (l *Log) wrapped(f *os.File) segmentFile {
	switch {
	case l.wrap != nil:
		return l.wrap(f)
	case l.opts.RawIO:
		return rawio.File{File: f}
	}
	return f
}

// removeFailed deletes a segment file whose opening records could not be
// written, so that a later attempt can create it again.
func removeFailed(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}

// memRead copies the kept bytes from off into p. It returns 0 when they
// are no longer kept (the caller looks again).
func (l *Log) memRead(off uint64, p []byte) int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if off < l.memStart || off >= l.memStart+uint64(len(l.mem)) {
		return 0
	}
	return copy(p, l.mem[off-l.memStart:])
}

// Skip records that the bytes up to off were produced but never logged,
// with a Gap record, so that offsets go on from there: a log reopened after
// its writer ended while stopped (the last gap unrecorded) must not hand
// out again offsets that viewers already saw. It does nothing when off is
// not past End.
func (l *Log) Skip(off uint64, reason string) error {
	if l.ro {
		return ErrReadOnly
	}
	l.tmu.Lock()
	defer l.tmu.Unlock()
	if l.werr != nil {
		return l.werr
	}
	l.mu.RLock()
	end, stopped := l.end, l.stop != nil
	l.mu.RUnlock()
	if off <= end || stopped || off-end > maxGap {
		return nil
	}
	if err := l.writeGapLocked(off-end, reason, l.opts.Now()); err != nil {
		return err
	}
	l.mu.Lock()
	l.end = off
	l.mu.Unlock()
	return nil
}
