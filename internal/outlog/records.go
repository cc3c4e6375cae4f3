package outlog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"
)

// ChunkKind says what a Chunk holds.
type ChunkKind uint8

const (
	// ChunkData is bytes of the stream: Data holds [Offset, Offset+len(Data)),
	// one record's worth (or less, where the range cuts a record). Mark is
	// set for bytes termkeep wrote itself (AppendMark).
	ChunkData ChunkKind = iota
	// ChunkSize says the terminal is Cols x Rows from Offset on.
	ChunkSize
	// ChunkGap is the bytes [Offset, End) that cannot be read. Err says why:
	// ErrCompacted (retention dropped them), an error wrapping ErrCorrupt (a
	// damaged segment), or a *GapError (they were never logged).
	ChunkGap
)

// Chunk is one step of Chunks' walk through the stream.
type Chunk struct {
	Kind   ChunkKind
	Offset uint64
	// Time is the latest Time record at or before Offset: when the bytes
	// were logged, to the Time records' spacing (Options.TimeEvery), in log
	// time, which never goes back (see the package comment). Zero when no
	// Time record was read before it (a gap at the very start).
	Time time.Time
	// Wall is what the wall clock read at that Time record: Time unless
	// the clock was set back or forward since the writer opened the log
	// (ClockSteps finds where).
	Wall time.Time

	Data []byte // ChunkData: valid only until fn returns; fn must not retain it
	Mark bool   // ChunkData: bytes termkeep wrote itself

	Cols, Rows uint16 // ChunkSize

	End uint64 // ChunkGap: the first offset after the lost bytes
	Err error  // ChunkGap: why they are lost
}

// Chunks walks the stream's bytes in [lo, hi) (hi is clamped to End) in
// order, with the time each was logged and the terminal size they were
// written at, calling fn for each step:
//
//   - first a ChunkSize with the size in force at lo (after every Size
//     record at lo), then one for each Size record in (lo, hi], in the
//     order they were logged, even several at one offset: a window shrunk
//     and grown again while the program printed nothing is two changes,
//     and the shrink alone may have scrolled the screen. A record that
//     repeats the size last reported is left out. Records at hi are
//     included (they are in force for what comes after the range), those
//     at lo are not: a reader that went through hi already applied them,
//     so walks of [a, b) and [b, c) report each change once;
//   - a ChunkData per data or mark record (clipped to the range), so a
//     consumer sees the chunks as the writer appended them;
//   - a ChunkGap for bytes that cannot be read, after which the walk goes
//     on: it never stops at, and never glues across, a hole in the log.
//
// The bytes come from a Cursor (checked against their checksums); times
// and sizes from the segments' record headers. An error from fn stops the
// walk and is returned; so is an error reading the log other than a gap
// (ErrClosed, an I/O error).
func (l *Log) Chunks(lo, hi uint64, fn func(c Chunk) error) error {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return ErrClosed
	}
	hi = min(hi, l.end)
	lo = min(lo, hi)
	// The segments holding [lo, hi], each walked from its start so that its
	// opening Time and Size records are seen before its first byte.
	var segs []uint64
	if len(l.segs) > 0 {
		i, j := max(segIndex(l.segs, lo), 0), max(segIndex(l.segs, hi), 0)
		segs = slices.Clone(l.segs[i : j+1])
	}
	l.mu.RUnlock()

	w := &chunkWalker{l: l, fn: fn, lo: lo, hi: hi, pos: lo, cur: l.Cursor(lo), buf: make([]byte, 2*ReadBuffer)}
	defer w.cur.Close()
	for _, seg := range segs {
		err := l.scanSegment(seg, w.record)
		if w.err != nil {
			return w.err
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("outlog: scan segment %s: %w", segName(seg), err)
		}
		// A segment retention deleted meanwhile: the cursor reports its
		// bytes as compacted.
	}
	if err := w.advance(hi, false); err != nil {
		return err
	}
	return w.flushSize()
}

// chunkWalker follows the record headers of a scan and reads the bytes
// they announce with a Cursor, reporting both in order.
type chunkWalker struct {
	l   *Log
	fn  func(Chunk) error
	lo  uint64
	hi  uint64
	err error // stops the scan; returned by Chunks

	pos  uint64 // next offset to report
	cur  *Cursor
	buf  []byte // 2*ReadBuffer: a read always has ReadBuffer of room after pend
	pend []byte // bytes read from pos on, not reported yet (a slice of buf)
	rerr error  // the cursor's error after pend: reported once pend is

	time, wall time.Time
	cols, rows uint16
	sized      bool         // cols, rows are known
	sizes      []SizeChange // Size records past lo, not reported yet
	sent       bool         // a ChunkSize was reported
	sentCols   uint16       // and its size
	sentRows   uint16
}

// record is scanSegment's callback: rec sits at data offset at.
func (w *chunkWalker) record(rec *record, at uint64) bool {
	if at > w.hi || (at == w.hi && isData(rec.typ)) {
		return false
	}
	if err := w.advance(at, false); err != nil {
		w.err = err
		return false
	}
	switch rec.typ {
	case recTime:
		w.time, w.wall = time.Unix(0, rec.steady()), time.Unix(0, rec.wall())
	case recSize:
		// Past lo each change is kept to be reported, so that two at one
		// offset are not folded into the last; at or before lo only the
		// size in force at lo counts.
		cols, rows := rec.size()
		if at > w.lo {
			w.sizes = append(w.sizes, SizeChange{Offset: at, Cols: cols, Rows: rows})
		} else {
			w.cols, w.rows, w.sized = cols, rows, true
		}
	case recData, recMark:
		if err := w.advance(min(at+uint64(rec.n), w.hi), rec.typ == recMark); err != nil {
			w.err = err
			return false
		}
	}
	return true
}

// advance reports everything from pos up to to: the bytes the cursor
// returns as data, what it cannot return as gaps. The range [pos, to) is
// one record (or a part of one) when called for a data record; the bytes
// are then reported in one chunk whenever the cursor can give them whole.
func (w *chunkWalker) advance(to uint64, mark bool) error {
	for w.pos < to {
		want := to - w.pos
		if uint64(len(w.pend)) < want && w.rerr == nil && (len(w.pend) == 0 || want <= maxPayload) {
			n, err := w.more()
			if n > 0 {
				continue
			}
			// Kept until pend is reported: a cursor that met a gap has
			// already moved past it.
			w.rerr = err
		}
		if len(w.pend) == 0 {
			err := w.rerr
			w.rerr = nil
			if err := w.skip(err); err != nil {
				return err
			}
			continue
		}
		k := min(uint64(len(w.pend)), want)
		if err := w.emit(Chunk{Kind: ChunkData, Offset: w.pos, Data: w.pend[:k:k], Mark: mark}); err != nil {
			return err
		}
		w.pend = w.pend[k:]
		w.pos += k
	}
	return nil
}

// more reads the next bytes after pend, keeping pend at the front of buf.
func (w *chunkWalker) more() (int, error) {
	if len(w.pend) > 0 && &w.pend[0] != &w.buf[0] {
		w.pend = w.buf[:copy(w.buf, w.pend)]
	}
	n, err := w.cur.Read(w.buf[len(w.pend):])
	w.pend = w.buf[:len(w.pend)+n]
	return n, err
}

// skip reports the bytes at pos that the cursor could not read (err) as a
// gap and moves past them. Errors that are not about the bytes end the walk.
func (w *chunkWalker) skip(err error) error {
	var next uint64
	var gap *GapError
	var dmg *DamageError
	switch {
	case errors.As(err, &gap):
		next = gap.End // the cursor is already there
	case errors.As(err, &dmg):
		next = dmg.End // so is this one
	case errors.Is(err, ErrCompacted):
		next = w.l.First()
	case errors.Is(err, ErrCorrupt):
		next = w.l.SkipCorrupt(w.pos)
	case err == io.EOF || err == nil:
		// The log holds less than its index promised (a writer's recovery
		// cut a torn tail a reader had already counted): the rest is gone.
		next, err = w.hi, fmt.Errorf("outlog: log ends at %d: %w", w.pos, io.ErrUnexpectedEOF)
	default:
		return err
	}
	next = max(next, w.pos+1)
	if err := w.emit(Chunk{Kind: ChunkGap, Offset: w.pos, End: min(next, w.hi), Err: err}); err != nil {
		return err
	}
	w.pos = next
	w.cur.Seek(next)
	return nil
}

// emit reports c, preceded by the size in force when it changed.
func (w *chunkWalker) emit(c Chunk) error {
	if err := w.flushSize(); err != nil {
		return err
	}
	c.Time, c.Wall = w.time, w.wall
	return w.fn(c)
}

// flushSize reports the size in force at lo, once, then each size change
// read since, in order, leaving out one that repeats the size last
// reported. It runs before the chunk that follows them, so a change is
// reported with that chunk's time (a Size record has none of its own).
func (w *chunkWalker) flushSize() error {
	if !w.sized {
		// No Size record read yet (the range starts in a gap): ask the
		// index, which falls back to the log's size.
		c, r, err := w.l.SizeAt(max(w.pos, w.l.First()))
		if err != nil {
			c, r = w.l.Size()
		}
		w.cols, w.rows, w.sized = c, r, true
	}
	if !w.sent {
		if err := w.sendSize(min(w.pos, w.hi), w.cols, w.rows); err != nil {
			return err
		}
	}
	sizes := w.sizes
	w.sizes = w.sizes[:0]
	for _, s := range sizes {
		w.cols, w.rows = s.Cols, s.Rows
		if s.Cols == w.sentCols && s.Rows == w.sentRows {
			continue
		}
		if err := w.sendSize(s.Offset, s.Cols, s.Rows); err != nil {
			return err
		}
	}
	return nil
}

func (w *chunkWalker) sendSize(off uint64, cols, rows uint16) error {
	w.sent, w.sentCols, w.sentRows = true, cols, rows
	return w.fn(Chunk{Kind: ChunkSize, Offset: off, Time: w.time, Wall: w.wall, Cols: cols, Rows: rows})
}
