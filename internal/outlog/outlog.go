// Package outlog is a terminal session's append-only output log: every byte
// the session's pty produced, in order, in segment files on disk.
//
// # Guarantees
//
// Write-ahead: Append returns only after its bytes were written to the
// segment file with write(2), so whatever the caller forwards after Append
// returns is in the log, and a Cursor in any process can read it. How soon it
// is also on stable storage is the SyncPolicy's choice.
//
// Offsets: the offset of a byte is the number of bytes the session produced
// before it since the log began: the data bytes (Data and Mark records) and
// the bytes Gap records stand for. Offsets never reset: reopening continues
// at End, and retention moves First up without renumbering anything.
//
// Stops: when a write fails (a full disk, a read-only or failing file
// system), the log stops instead of failing the caller: Append goes on
// giving offsets, keeps the newest bytes in memory for the writer's own
// cursors (a live viewer misses nothing), and returns an error matching
// ErrStopped; Stopped says since when and why. At most once a second an
// Append (or Retry) tries again; the first write that succeeds records a Gap
// record for the bytes that went by, and logging goes on. A Cursor reading
// a gap gets a *GapError, never the bytes on either side glued together.
//
// Recovery: Open in write mode truncates the last segment after its last
// complete record whose checksum verifies, so a crash costs at most the
// record being written; Recovered reports the bytes dropped. Open never
// refuses a log because of a bad tail. Read-only Open changes nothing; it
// takes an incomplete or bad tail as the current end, the same end a writer's
// recovery would keep.
//
// Damage: records that do not verify with records after them that do are
// not a tail. Every reader resynchronises on the next run of good records
// and reports the offsets the damaged ones stood for as lost (a
// *DamageError from a Cursor, a ChunkGap from Chunks), never the bytes on
// either side glued together; see damage.go.
//
// Retention: when more than Options.Retention data bytes are retained, whole
// oldest segments are deleted, never the one being written; retained data
// stays within Retention plus one segment. Reading below First returns
// ErrCompacted: what retention dropped is gone on purpose. A reader that
// relays the log (the holder's forwarder) may Hold its position: Retention
// is then counted back from there rather than from the end, so a relay
// that falls behind a burst still has the bytes behind it that it would
// have had keeping up, up to twice Retention in all.
//
// Concurrency: one process writes a log directory; any number of processes
// may open it read-only meanwhile. A Log is safe for concurrent use. Appends
// are serialized; each reading goroutine uses its own Cursor, and cursors
// never wait for an Append's write or fsync.
//
// Ownership: Append and AppendMark do not retain p. Cursor.Read fills the
// caller's p and may use all of it as scratch space during the call.
//
// # On disk
//
// A log is a directory of segment files, each named by the offset of its
// first data byte, padded to 20 digits: 00000000000004194304.seg. A segment
// is a sequence of records:
//
//	type    uint8   1 Data, 2 Mark, 3 Time, 4 Size, 5 Gap
//	length  uint32  big endian, at most 1 MiB
//	crc     uint32  big endian, CRC-32C of the type byte and the payload
//	payload length bytes
//
// Data and Mark payloads are the stream (Mark flags bytes termkeep wrote
// itself). A Time record (two unix nanosecond times, int64 each: what the
// wall clock read, and the log time) precedes data when Options.TimeEvery
// has passed since the last one. The log time is the wall clock's reading
// when the writer opened the log (or the last log time logged, if that is
// later), advanced from then on by a monotonic clock: it never goes back,
// and it measures the time between two records truly when the wall clock
// is set back or forward between them, which a reader shows as a step
// (ClockSteps). A Time record written before the log time existed holds
// the wall clock alone, which readers take as its log time too. A Size
// record (cols, rows, uint16 each) gives the terminal size from its offset
// on. A Gap record
// (length uint64, then a short UTF-8 reason) stands for that many bytes that
// were never logged. Every segment opens with a Time and a Size record, so
// each segment alone tells the size.
package outlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

var (
	ErrCompacted = errors.New("outlog: offset no longer retained")
	ErrReadOnly  = errors.New("outlog: log is open read-only")
	ErrClosed    = errors.New("outlog: log is closed")
	// ErrCorrupt is wrapped by a Cursor's Read when a segment does not hold
	// the data its neighbours say it holds (a bad checksum or a missing
	// piece outside the tail recovery covers). The range is lost; a caller
	// should treat it like a compacted one.
	ErrCorrupt = errors.New("outlog: segment is corrupt")
)

// SyncPolicy says when appended bytes are fsynced.
type SyncPolicy int

const (
	SyncInterval SyncPolicy = iota // at most once per SyncEvery, inside the Append that finds it due; and at Sync and Close
	SyncAlways                     // after every append
	SyncNever                      // only at Sync and Close
)

// Options configure Open. The zero value is a writable log with defaults.
type Options struct {
	ReadOnly    bool  // open a log another process writes; never modifies files
	Retention   int64 // max retained data bytes; 0 = 64 MiB
	SegmentSize int64 // 0 = Retention/16 clamped to [64 KiB, 8 MiB]
	Sync        SyncPolicy
	SyncEvery   time.Duration    // 0 = 1s
	TimeEvery   time.Duration    // 0 = 1s: spacing of Time records
	Now         func() time.Time // nil = time.Now; stamps Time records and paces syncs
	// Mono reads a monotonic clock, which advances the log time between
	// Time records. nil = the system's boot clock, which counts time
	// suspended (CLOCK_BOOTTIME on Linux; elsewhere the process's
	// monotonic clock, which may not); or, when Now is given, Now's
	// readings, taken as a clock that is never set.
	Mono       func() time.Duration
	Cols, Rows uint16 // size recorded in a brand-new log; 0 = 80x24; ignored when the log exists
	// RawIO appends and reads with system calls the Go scheduler is not
	// told of (internal/rawio): for a process that does little else and
	// wakes for every chunk (the holder). Such a call holds the process's
	// P until it returns, which a local disk's page cache makes short.
	RawIO bool
}

const (
	defaultRetention = 64 << 20
	minSegment       = 64 << 10
	maxSegment       = 8 << 20

	// copyMax bounds the reusable append buffer: a payload up to this size
	// is copied behind its header and written in one write(2); a larger one
	// is written straight from the caller's slice after its header.
	copyMax = 128 << 10
)

// ReadBuffer is the least buffer size with which Cursor.Read never returns
// a byte before its record's checksum has been checked: one whole record of
// the largest size, with its header.
const ReadBuffer = maxPayload + hdrSize

func (o Options) withDefaults() Options {
	if o.Retention <= 0 {
		o.Retention = defaultRetention
	}
	if o.SegmentSize <= 0 {
		o.SegmentSize = min(max(o.Retention/16, minSegment), maxSegment)
	}
	if o.SyncEvery <= 0 {
		o.SyncEvery = time.Second
	}
	if o.TimeEvery <= 0 {
		o.TimeEvery = time.Second
	}
	if o.Mono == nil && o.Now != nil {
		now := o.Now
		o.Mono = func() time.Duration { return time.Duration(now().UnixNano()) }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Mono == nil {
		o.Mono = bootClock
	}
	if o.Cols == 0 {
		o.Cols = 80
	}
	if o.Rows == 0 {
		o.Rows = 24
	}
	return o
}

// Log is one session's output log, open for writing or read-only.
type Log struct {
	dir       string
	opts      Options
	ro        bool
	recovered int64         // set by Open
	hold      atomic.Uint64 // see Hold: the held offset + 1; 0 = none

	// tmu serializes everything that touches the tail segment file: appends,
	// Sync and Close in write mode, rescans in read-only mode. Fields written
	// under both tmu and mu may be read holding either.
	tmu       sync.Mutex
	tail      segmentFile // the last segment; write mode: O_APPEND
	tailStart uint64      // its start offset
	tailPos   int64       // bytes of it known good (write mode: its size)
	buf       []byte      // reusable append buffer
	lastTime  time.Time   // of the last Time record written; zero after Open so a restart is stamped
	steadyAt  int64       // the log time is steadyAt + Mono(); set by Open
	steady    int64       // the last log time written: it never goes back
	lastSync  time.Time
	dirty     bool                       // written since the last fsync
	werr      error                      // sticky: the first failed fsync, or ErrClosed
	bg        *background                // write mode: fsync and unlink off the append path
	lastTry   time.Time                  // stopped: of the last attempt to write again
	resumedAt time.Time                  // when the last stop ended
	sizeDirty bool                       // stopped: the size changed and is not logged yet
	wrap      func(*os.File) segmentFile // tests: wraps each new tail
	freeSpace func() (int64, bool)       // tests: the file system's free space

	// mu guards the index that cursors and queries read. It is held only
	// to copy or update these fields, never across I/O.
	mu         sync.RWMutex
	segs       []uint64 // start offsets, ascending; the last is the tail
	end        uint64
	cols, rows uint16 // in force at end
	sizeOff    uint64 // they have been in force since at least here
	closed     bool

	// While the log is stopped (see stop.go) and for a while after, the
	// newest bytes it could not write: mem holds [memStart, memStart+len).
	stop      *Stop
	mem       []byte
	memStart  uint64
	memReason string

	// dmgMu guards dmgCache: the damage maps of segments found damaged
	// (damage.go). It is taken after tmu and mu, never before.
	dmgMu    sync.Mutex
	dmgCache map[uint64]segDamage
	// tailDamaged is set (under tmu) when a read-only scan of the tail
	// met damage or stopped short of the file's end: the writer may then
	// have moved on to a segment named by an end this Log cannot compute.
	tailDamaged bool
	stuckAt     int64 // tailPos where a Refresh last found bytes it could not scan
	// guessAt is the offset where the tail's first damage of estimated
	// length begins (read-only; when guessed): offsets past it may not be
	// the writer's. Guarded by mu.
	guessAt uint64
	guessed bool
}

// Open opens the log in dir; see Options and the package comment.
func Open(dir string, opts Options) (*Log, error) {
	l := &Log{dir: dir, opts: opts.withDefaults(), ro: opts.ReadOnly}
	l.cols, l.rows = l.opts.Cols, l.opts.Rows
	var err error
	if l.ro {
		err = l.openReader()
	} else {
		err = l.openWriter()
	}
	if err != nil {
		if l.tail != nil {
			l.tail.Close()
		}
		return nil, err
	}
	if !l.ro && l.opts.Sync != SyncAlways {
		l.bg = startBackground()
	}
	return l, nil
}

func (l *Log) openReader() error {
	segs, err := listSegments(l.dir)
	if err != nil {
		return fmt.Errorf("outlog: open log: %w", err)
	}
	l.segs = segs
	if len(segs) == 0 {
		return nil // Refresh will find the writer's first segment
	}
	start := segs[len(segs)-1]
	f, err := os.Open(segPath(l.dir, start))
	if err != nil {
		return fmt.Errorf("outlog: open segment: %w", err)
	}
	l.tail, l.tailStart, l.end, l.sizeOff = f, start, start, start
	ts, err := scanVerified(f, 0)
	if err != nil {
		return fmt.Errorf("outlog: scan segment %s: %w", segName(start), err)
	}
	l.tailPos = ts.pos
	l.tailDamaged = len(ts.dmg) > 0
	l.guessAt, l.guessed = guessAt(ts.dmg, start)
	l.end = start + ts.data
	if ts.sized {
		l.cols, l.rows, l.sizeOff = ts.cols, ts.rows, start+ts.sizeOff
	} else {
		l.cols, l.rows = l.sizeBefore(segs[:len(segs)-1])
	}
	return nil
}

func (l *Log) openWriter() error {
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return fmt.Errorf("outlog: create log dir: %w", err)
	}
	segs, err := listSegments(l.dir)
	if err != nil {
		return fmt.Errorf("outlog: open log: %w", err)
	}
	now := l.opts.Now()
	l.lastSync = now
	if len(segs) == 0 {
		l.segs = []uint64{0}
		l.startSteady(now, tailScan{}, nil)
		return l.createTail(0, now)
	}
	l.segs = segs
	start := segs[len(segs)-1]
	f, err := os.OpenFile(segPath(l.dir, start), os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("outlog: open segment: %w", err)
	}
	l.tail, l.tailStart = l.wrapped(f), start
	ts, err := scanVerified(f, 0)
	if err != nil {
		// Never truncate on a read error: the tail may be fine.
		return fmt.Errorf("outlog: scan segment %s: %w", segName(start), err)
	}
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("outlog: stat segment %s: %w", segName(start), err)
	}
	if fi.Size() > ts.pos {
		if err := f.Truncate(ts.pos); err != nil {
			return fmt.Errorf("outlog: truncate segment %s: %w", segName(start), err)
		}
		if err := l.syncFile(f); err != nil {
			return fmt.Errorf("outlog: sync segment %s: %w", segName(start), err)
		}
		l.recovered = fi.Size() - ts.pos
	}
	l.tailPos = ts.pos
	l.end = start + ts.data
	l.sizeOff = start
	l.startSteady(now, ts, segs[:len(segs)-1])
	if ts.sized {
		l.cols, l.rows, l.sizeOff = ts.cols, ts.rows, start+ts.sizeOff
	} else {
		l.cols, l.rows = l.sizeBefore(segs[:len(segs)-1])
	}
	if ts.pos == 0 {
		// A segment is created just before its first records are written; a
		// crash in between leaves it empty. Give it its opening records.
		if err := l.writeHead(now); err != nil {
			return err
		}
	}
	l.trim()
	return nil
}

// startSteady sets the log time to run on from the wall clock's reading
// now, or from the last log time logged when that is later (the clock was
// set back while no writer had the log open): the log time never goes back.
// ts is the tail's scan; before are the segments before it.
func (l *Log) startSteady(now time.Time, ts tailScan, before []uint64) {
	last, found := ts.steady, ts.timed
	for i := len(before) - 1; i >= 0 && !found; i-- {
		l.scanSegment(before[i], func(rec *record, _ uint64) bool {
			if rec.typ == recTime {
				last, found = rec.steady(), true
			}
			return true
		})
	}
	start := now.UnixNano()
	if found {
		start = max(start, last)
	}
	l.steadyAt = start - int64(l.opts.Mono())
	l.steady = start
}

// appendTime appends a Time record stamped now.
func (l *Log) appendTime(b []byte, now time.Time) []byte {
	l.steady = max(l.steady, l.steadyAt+int64(l.opts.Mono()))
	return appendTime(b, now, l.steady)
}

// sizeBefore finds the size in force at the end of the newest of segs that
// has a Size record: the size a segment without one inherits.
func (l *Log) sizeBefore(segs []uint64) (cols, rows uint16) {
	for i := len(segs) - 1; i >= 0; i-- {
		found := false
		l.scanSegment(segs[i], func(rec *record, _ uint64) bool {
			if rec.typ == recSize {
				cols, rows = rec.size()
				found = true
			}
			return true
		})
		if found {
			return cols, rows
		}
	}
	return l.opts.Cols, l.opts.Rows
}

// scanSegment walks the headers of segment start, calling fn with each
// record and the data offset where it sits, until fn returns false.
func (l *Log) scanSegment(start uint64, fn func(rec *record, off uint64) bool) error {
	f, err := os.Open(segPath(l.dir, start))
	if err != nil {
		return err
	}
	defer f.Close()
	s := l.newSegmentScanner(f, start)
	defer s.release()
	var rec record
	for {
		off := s.off
		if !s.next(&rec) {
			break
		}
		if !fn(&rec, off) {
			return nil
		}
	}
	return s.err
}

// newSegmentScanner returns a header scanner of segment start's file f
// that steps over the segment's damage (damage.go).
func (l *Log) newSegmentScanner(f *os.File, start uint64) *scanner {
	s := newScanner(f, 0, false)
	s.off = start
	l.dmgMu.Lock()
	_, known := l.dmgCache[start]
	l.dmgMu.Unlock()
	if known {
		// Known damaged: step over it from the start, even where a hit
		// header still parses.
		s.dmg = l.damageMap(start, 0)
	}
	s.load = func() []damage { return l.damageMap(start, s.pos) }
	return s
}

func (l *Log) syncFile(f *os.File) error {
	if l.opts.Sync == SyncNever {
		return nil
	}
	return f.Sync()
}

// syncDir makes a new segment's name durable, so a crash cannot leave data
// in a file that no directory entry reaches.
func (l *Log) syncDir() error {
	if l.opts.Sync == SyncNever {
		return nil
	}
	d, err := os.Open(l.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// createTail starts segment start and writes its opening records.
func (l *Log) createTail(start uint64, now time.Time) error {
	f, err := os.OpenFile(segPath(l.dir, start), os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("outlog: create segment: %w", err)
	}
	if l.bg != nil && l.opts.Sync == SyncInterval {
		l.bg.do(func() error {
			if err := l.syncDir(); err != nil {
				return fmt.Errorf("outlog: sync log dir: %w", err)
			}
			return nil
		})
	} else if err := l.syncDir(); err != nil {
		f.Close()
		return fmt.Errorf("outlog: sync log dir: %w", err)
	}
	if l.tail != nil {
		l.tail.Close()
	}
	l.tail, l.tailStart, l.tailPos = l.wrapped(f), start, 0
	if err := l.writeHead(now); err != nil {
		removeFailed(f)
		l.tail = nil
		return err
	}
	return nil
}

// writeHead writes the Time and Size records that open a segment.
func (l *Log) writeHead(now time.Time) error {
	b := appendSize(l.appendTime(l.buf[:0], now), l.cols, l.rows)
	l.buf = b[:0]
	if _, err := l.tail.Write(b); err != nil {
		return fmt.Errorf("outlog: write segment %s: %w", segName(l.tailStart), err)
	}
	l.tailPos += int64(len(b))
	l.lastTime = now
	l.dirty = true
	return nil
}

// roll finishes the tail and starts the next segment at the current end.
func (l *Log) roll(now time.Time) error {
	// Under SyncAlways the finished segment is on disk before its successor
	// exists, so a crash never leaves a hole behind a later segment. Under
	// SyncInterval its fsync is queued ahead of any fsync of the successor;
	// a crash in between can tear its end (up to the interval's worth of
	// output, as anywhere else), which a reader reports as damaged bytes.
	old, oldStart := l.tail, l.tailStart
	l.tail = nil
	if err := l.finish(old, oldStart); err != nil {
		return err
	}
	if err := l.createTail(l.end, now); err != nil {
		return err
	}
	l.mu.Lock()
	l.segs = append(l.segs, l.end)
	l.mu.Unlock()
	return nil
}

// Hold counts retention back from off instead of from the end, while off
// is behind the end, and until Release: the bytes a relay at off would have
// had behind it had it kept up stay retained, up to twice Retention in all.
// It takes effect at the next segment's start.
func (l *Log) Hold(off uint64) { l.hold.Store(off + 1) }

// Release ends a Hold: retention counts back from the end again.
func (l *Log) Release() { l.hold.Store(0) }

// Held returns the offset of the Hold in force, if any.
func (l *Log) Held() (off uint64, ok bool) {
	h := l.hold.Load()
	return h - 1, h != 0
}

// Retention returns the retained data bytes the log keeps (Options.Retention
// with its default).
func (l *Log) Retention() int64 { return l.opts.Retention }

// trim deletes the oldest segments while more than Retention is retained
// (counted back from a Hold's offset), or more than twice Retention in all.
// They leave the index before their files go, so a cursor sees ErrCompacted
// rather than a missing file.
func (l *Log) trim() {
	keep := uint64(l.opts.Retention)
	ref := l.end
	if h := l.hold.Load(); h != 0 && h-1 < ref {
		ref = h - 1
	}
	for len(l.segs) > 1 && (ref-min(ref, l.segs[0]) > keep || l.end-l.segs[0] > 2*keep) {
		old := l.segs[0]
		l.mu.Lock()
		l.segs = slices.Delete(l.segs, 0, 1)
		l.mu.Unlock()
		// A file that will not go is retried by the next Open's trim.
		if l.bg != nil {
			path := segPath(l.dir, old)
			l.bg.do(func() error { os.Remove(path); return nil })
		} else {
			os.Remove(segPath(l.dir, old))
		}
	}
}

// Append logs p as session output and returns the offset of p[0]. It makes
// one write(2) for a p up to 128 KiB (splitting only where a segment ends)
// and splits a p over 1 MiB into several records. When a write fails, the
// log stops (see the package comment): p and what follows get their offsets
// and an error matching ErrStopped until a retry succeeds. A failed fsync is
// sticky instead: that error is returned by this and every later call
// (ErrClosed after Close).
func (l *Log) Append(p []byte) (off uint64, err error) { return l.append(recData, p) }

// AppendMark logs p as bytes termkeep itself wrote into the stream. They
// take offsets like output, so replay shows them in place.
func (l *Log) AppendMark(p []byte) (off uint64, err error) { return l.append(recMark, p) }

func (l *Log) append(typ byte, p []byte) (uint64, error) {
	if l.ro {
		return 0, ErrReadOnly
	}
	l.tmu.Lock()
	defer l.tmu.Unlock()
	if l.werr != nil {
		return 0, l.werr
	}
	if l.bg != nil {
		if err := l.bg.failed(); err != nil {
			return 0, l.fail(err)
		}
	}
	start := l.end
	if len(p) == 0 {
		return start, nil
	}
	now := l.opts.Now()
	if l.stop != nil {
		if now.Sub(l.lastTry) < retryEvery {
			return start, l.keepLocked(p)
		}
		l.lastTry = now
		if l.resumeLocked(now) != nil {
			return start, l.keepLocked(p)
		}
	}
	for len(p) > 0 {
		// A wall clock set back is a Time record due at once: the step is
		// logged where it happened (Now's own monotonic reading, when it has
		// one, never goes back).
		since := now.Sub(l.lastTime)
		timeDue := since >= l.opts.TimeEvery || since < 0
		room := l.opts.SegmentSize - l.tailPos - hdrSize
		if timeDue {
			room -= timeRecLen
		}
		// A segment without data cannot roll: its successor would have
		// its name.
		if room <= 0 && l.end > l.tailStart {
			if err := l.roll(now); err != nil {
				l.stopLocked(err, now)
				return start, l.keepLocked(p)
			}
			continue
		}
		n := min(len(p), maxPayload)
		if room > 0 && int64(n) > room {
			n = int(room)
		}
		if err := l.writeRecord(typ, p[:n], now, timeDue); err != nil {
			l.stopLocked(err, now)
			return start, l.keepLocked(p)
		}
		p = p[n:]
	}
	if err := l.syncDue(now); err != nil {
		return start, l.fail(err)
	}
	l.trim()
	l.dropMemLocked(now)
	return start, nil
}

// writeRecord writes one data record, preceded by a Time record when due,
// with one write(2) when the payload fits the append buffer.
func (l *Log) writeRecord(typ byte, p []byte, now time.Time, stamp bool) error {
	b := l.buf[:0]
	if stamp {
		b = l.appendTime(b, now)
	}
	b = appendHeader(b, typ, p)
	big := len(p) > copyMax
	if !big {
		b = append(b, p...)
	}
	l.buf = b[:0]
	if _, err := l.tail.Write(b); err != nil {
		return fmt.Errorf("outlog: write segment %s: %w", segName(l.tailStart), err)
	}
	if big {
		if _, err := l.tail.Write(p); err != nil {
			return fmt.Errorf("outlog: write segment %s: %w", segName(l.tailStart), err)
		}
		l.tailPos += int64(len(p))
	}
	l.tailPos += int64(len(b))
	l.dirty = true
	if stamp {
		l.lastTime = now
	}
	l.mu.Lock()
	l.end += uint64(len(p))
	l.mu.Unlock()
	return nil
}

func (l *Log) syncDue(now time.Time) error {
	switch l.opts.Sync {
	case SyncAlways:
		return l.syncLocked(now)
	case SyncInterval:
		if now.Sub(l.lastSync) < l.opts.SyncEvery || !l.dirty {
			return nil
		}
		if l.bg == nil {
			return l.syncLocked(now)
		}
		// The tail's own fsync runs in the background; a later roll queues
		// the file's close behind it.
		f, start := l.tail, l.tailStart
		l.bg.do(func() error {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("outlog: sync segment %s: %w", segName(start), err)
			}
			return nil
		})
		l.dirty = false
		l.lastSync = now
	}
	return nil
}

func (l *Log) syncLocked(now time.Time) error {
	if !l.dirty || l.tail == nil {
		return nil
	}
	if err := l.tail.Sync(); err != nil {
		return fmt.Errorf("outlog: sync segment %s: %w", segName(l.tailStart), err)
	}
	l.dirty = false
	l.lastSync = now
	return nil
}

// fail makes err sticky: after a failed write the file may end in a torn
// record, and only a reopen's recovery may write after it.
func (l *Log) fail(err error) error {
	l.werr = err
	return err
}

// SetSize records that the terminal is cols x rows from the current end on.
func (l *Log) SetSize(cols, rows uint16) error {
	if l.ro {
		return ErrReadOnly
	}
	l.tmu.Lock()
	defer l.tmu.Unlock()
	if l.werr != nil {
		return l.werr
	}
	if cols == l.cols && rows == l.rows {
		return nil
	}
	if l.stop != nil {
		l.sizeDirty = true // written when logging resumes
	} else {
		b := appendSize(l.buf[:0], cols, rows)
		l.buf = b[:0]
		if _, err := l.tail.Write(b); err != nil {
			l.stopLocked(fmt.Errorf("outlog: write segment %s: %w", segName(l.tailStart), err), l.opts.Now())
			l.sizeDirty = true
		} else {
			l.tailPos += int64(len(b))
			l.dirty = true
		}
	}
	l.mu.Lock()
	l.cols, l.rows, l.sizeOff = cols, rows, l.end
	l.mu.Unlock()
	if l.opts.Sync == SyncAlways {
		if err := l.syncLocked(l.opts.Now()); err != nil {
			return l.fail(err)
		}
	}
	return nil
}

// First returns the oldest retained offset.
func (l *Log) First() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.firstLocked()
}

func (l *Log) firstLocked() uint64 {
	if len(l.segs) == 0 {
		return l.end
	}
	return min(l.segs[0], l.end)
}

// FirstOffset returns the oldest offset retained in the log in dir without
// opening it: one readdir, the segment files' names read, none opened, so
// a list of many sessions stays cheap. It is the First of a log opened
// read-only at the same moment (the writer deletes a trimmed segment's
// file just after it leaves its index: until then both still count it),
// and 0 for a directory with no segment yet. It changes nothing.
func FirstOffset(dir string) (uint64, error) {
	segs, err := listSegments(dir)
	if err != nil {
		return 0, fmt.Errorf("outlog: list segments: %w", err)
	}
	if len(segs) == 0 {
		return 0, nil
	}
	return segs[0], nil
}

// End returns the offset after the last byte logged (read-only: as of the
// last Refresh).
func (l *Log) End() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.end
}

// SureEnd returns End, or, when damage of a length only estimated lies in
// the tail segment of a read-only log, the offset where it begins: an
// offset the writer has certainly reached, from which to ask it for what
// follows. Once the writer seals the segment (Seal), End is sure again.
func (l *Log) SureEnd() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.guessed {
		return min(l.guessAt, l.end)
	}
	return l.end
}

// guessAt returns the offset of the first stretch of dmg whose length is
// estimated, dmg's offsets being relative to base, if there is one.
func guessAt(dmg []damage, base uint64) (uint64, bool) {
	for _, d := range dmg {
		if !d.exact {
			return base + d.off, true
		}
	}
	return 0, false
}

// Size returns the terminal size in force at End.
func (l *Log) Size() (cols, rows uint16) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cols, l.rows
}

// SizeAt returns the terminal size in force at off: the last Size record at
// or before it. Offsets at or past End get the current size.
func (l *Log) SizeAt(off uint64) (cols, rows uint16, err error) {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return 0, 0, ErrClosed
	}
	if off < l.firstLocked() {
		l.mu.RUnlock()
		return 0, 0, ErrCompacted
	}
	if off >= l.sizeOff {
		cols, rows = l.cols, l.rows
		l.mu.RUnlock()
		return cols, rows, nil
	}
	i := segIndex(l.segs, off)
	segs := slices.Clone(l.segs[:i+1])
	l.mu.RUnlock()

	found := false
	err = l.scanSegment(segs[i], func(rec *record, at uint64) bool {
		if at > off {
			return false
		}
		if rec.typ == recSize {
			cols, rows = rec.size()
			found = true
		}
		return true
	})
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, ErrCompacted
	}
	if err != nil {
		return 0, 0, fmt.Errorf("outlog: scan segment %s: %w", segName(segs[i]), err)
	}
	if !found {
		cols, rows = l.sizeBefore(segs[:i])
	}
	return cols, rows, nil
}

// segIndex returns the index of the segment holding off, or -1.
func segIndex(segs []uint64, off uint64) int {
	i, found := slices.BinarySearch(segs, off)
	if !found {
		i--
	}
	return i
}

// OffsetAt returns the offset of the first byte logged at or after t, as told
// by the Time records' log times, clamped to [First, End].
func (l *Log) OffsetAt(t time.Time) (uint64, error) {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return 0, ErrClosed
	}
	segs := slices.Clone(l.segs)
	first, end := l.firstLocked(), l.end
	l.mu.RUnlock()

	target := t.UnixNano()
	// Each segment opens with a Time record: binary-search those, then
	// look inside the segment before the first that is late enough.
	j, _ := slices.BinarySearchFunc(segs, target, func(start uint64, target int64) int {
		if l.firstTime(start) >= target {
			return 1
		}
		return -1
	})
	ans := end
	if j < len(segs) {
		ans = segs[j]
	}
	if j > 0 {
		limit := ans
		err := l.scanSegment(segs[j-1], func(rec *record, at uint64) bool {
			if at >= limit {
				return false
			}
			if rec.typ == recTime && rec.steady() >= target {
				ans = at
				return false
			}
			return true
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("outlog: scan segment %s: %w", segName(segs[j-1]), err)
		}
	}
	return min(max(ans, first), end), nil
}

// firstTime returns the time of a segment's first Time record, or the
// earliest time when it has none before its data (or is gone).
func (l *Log) firstTime(start uint64) int64 {
	ts := int64(-1 << 63)
	l.scanSegment(start, func(rec *record, _ uint64) bool {
		if rec.typ == recTime {
			ts = rec.steady()
			return false
		}
		return !isData(rec.typ)
	})
	return ts
}

// Refresh picks up what the writer added since the last Refresh: new
// records in the tail, new segments, segments retention deleted. It reads
// only the new bytes, plus a stat or two when there are none. In write mode
// the Log is always current, and Refresh does nothing.
func (l *Log) Refresh() error {
	if !l.ro {
		return nil
	}
	l.tmu.Lock()
	defer l.tmu.Unlock()
	if l.isClosed() {
		return ErrClosed
	}
	if l.tail == nil {
		return l.resync()
	}
	fi, err := l.tail.Stat()
	if err != nil {
		return fmt.Errorf("outlog: stat segment %s: %w", segName(l.tailStart), err)
	}
	if fi.Size() > l.tailPos {
		before := l.tailPos
		if err := l.scanTail(); err != nil {
			return err
		}
		if l.tailPos > before {
			return nil
		}
		// Bytes that do not verify and nothing after them that does: a
		// record being written, or, seen twice at one place, damage at
		// the end of a tail the writer may have left.
		l.tailDamaged = l.tailDamaged || l.stuckAt == l.tailPos
		l.stuckAt = l.tailPos
	}
	if l.tailDamaged {
		// The end this Log computed past damage may not be the name
		// the writer gave its next segment: look for any newer one.
		segs, err := listSegments(l.dir)
		if err != nil {
			return fmt.Errorf("outlog: list segments: %w", err)
		}
		if len(segs) > 0 && segs[len(segs)-1] != l.tailStart {
			return l.resync()
		}
	}
	// Nothing new in the tail: the writer is idle, or it has moved on to a
	// segment named by our end, or we fell so far behind that retention
	// deleted our tail.
	l.mu.RLock()
	end := l.end
	l.mu.RUnlock()
	if end != l.tailStart {
		if _, err := os.Stat(segPath(l.dir, end)); err == nil {
			return l.resync()
		}
	}
	if _, err := os.Stat(segPath(l.dir, l.tailStart)); errors.Is(err, fs.ErrNotExist) {
		return l.resync()
	}
	return nil
}

func (l *Log) isClosed() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.closed
}

// scanTail verifies the tail's records from tailPos on and publishes them.
func (l *Log) scanTail() error {
	ts, err := scanVerified(l.tail, l.tailPos)
	if err != nil {
		return fmt.Errorf("outlog: scan segment %s: %w", segName(l.tailStart), err)
	}
	l.tailPos = ts.pos
	if len(ts.dmg) > 0 {
		l.tailDamaged = true
	}
	l.mu.Lock()
	from := l.end
	if !l.guessed {
		l.guessAt, l.guessed = guessAt(ts.dmg, from)
	}
	l.end += ts.data
	if ts.sized {
		l.cols, l.rows, l.sizeOff = ts.cols, ts.rows, from+ts.sizeOff
	}
	l.mu.Unlock()
	return nil
}

// resync rereads the directory and adopts its newest segment as the tail.
// Segments between the old tail and the new one hold what their names say.
func (l *Log) resync() error {
	segs, err := listSegments(l.dir)
	if err != nil {
		return fmt.Errorf("outlog: list segments: %w", err)
	}
	if len(segs) == 0 {
		return nil
	}
	last := segs[len(segs)-1]
	if l.tail != nil && last == l.tailStart {
		l.mu.Lock()
		l.segs = segs
		l.mu.Unlock()
		return l.scanTail()
	}
	f, err := os.Open(segPath(l.dir, last))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // deleted since the listing; the next Refresh looks again
	}
	if err != nil {
		return fmt.Errorf("outlog: open segment: %w", err)
	}
	if l.tail != nil {
		l.tail.Close()
	}
	l.tail, l.tailStart, l.tailPos = f, last, 0
	l.tailDamaged = false
	l.mu.Lock()
	l.segs = segs
	l.end = last
	l.sizeOff = last
	l.guessed = false
	l.mu.Unlock()
	return l.scanTail()
}

// Sync flushes appended bytes to stable storage, after the background work
// queued before it: the files of segments retention dropped are gone when
// it returns, so the directory (FirstOffset, a read-only Open) agrees with
// First. Read-only: nothing to do.
func (l *Log) Sync() error {
	if l.ro {
		return nil
	}
	l.tmu.Lock()
	defer l.tmu.Unlock()
	if l.werr != nil {
		return l.werr
	}
	if l.bg != nil {
		if err := l.bg.wait(); err != nil {
			return l.fail(err)
		}
	}
	if err := l.syncLocked(l.opts.Now()); err != nil {
		return l.fail(err)
	}
	return nil
}

// Close syncs (write mode) and closes the log. Later calls on the Log and
// its cursors return ErrClosed.
func (l *Log) Close() error {
	l.tmu.Lock()
	defer l.tmu.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	stopped := l.stop != nil
	l.mu.Unlock()
	if stopped && !l.ro && l.werr == nil {
		// A last try, so that a reopened log continues at the right offset.
		l.resumeLocked(l.opts.Now())
	}
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	var err error
	if l.bg != nil {
		if berr := l.bg.stop(); berr != nil && l.werr == nil {
			err = berr
		}
		l.bg = nil
	}
	if !l.ro && l.werr == nil && l.dirty && l.tail != nil {
		if serr := l.tail.Sync(); serr != nil {
			err = fmt.Errorf("outlog: sync segment %s: %w", segName(l.tailStart), serr)
		}
	}
	if l.tail != nil {
		if cerr := l.tail.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("outlog: close segment %s: %w", segName(l.tailStart), cerr)
		}
	}
	l.werr = ErrClosed
	l.buf = nil
	return err
}

// Recovered returns how many bytes Open dropped from a torn or bad tail.
func (l *Log) Recovered() int64 { return l.recovered }

// SkipCorrupt returns where reading can resume after a Cursor at off met
// ErrCorrupt: the end of the damaged stretch holding off (the End of the
// *DamageError the Cursor returned); failing that, the first offset of the
// segment after the one holding off, or End when off is in the last segment. The bytes in between are lost; a
// reader reports them as such and goes on, rather than stalling on them.
func (l *Log) SkipCorrupt(off uint64) uint64 {
	if next, ok := l.skipDamage(off); ok {
		return max(next, off)
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	i := segIndex(l.segs, off)
	if i+1 < len(l.segs) {
		return max(l.segs[i+1], off)
	}
	return max(l.end, off)
}

// SizeChange is a terminal size in force from Offset on.
type SizeChange struct {
	Offset     uint64
	Cols, Rows uint16
}

// Range is the bytes [Start, End) of the stream.
type Range struct{ Start, End uint64 }

// Marks returns the ranges of bytes in [lo, hi) that termkeep itself wrote
// (AppendMark), such as a restore's banner, in order: an export or a replay
// tells them apart from what the programs printed. Adjacent marks are
// merged; a mark that straddles lo or hi is clipped.
func (l *Log) Marks(lo, hi uint64) ([]Range, error) {
	var out []Range
	err := l.scanRange(lo, hi, func(rec *record, at uint64) {
		if rec.typ != recMark {
			return
		}
		r := Range{max(at, lo), min(at+uint64(rec.n), hi)}
		if r.Start >= r.End {
			return
		}
		if n := len(out); n > 0 && out[n-1].End == r.Start {
			out[n-1].End = r.End
			return
		}
		out = append(out, r)
	})
	return out, err
}

// scanRange calls fn for every record of the segments that hold [lo, hi),
// with the offset of its first byte, from the record at or before lo up to
// the first record at or after hi. Offsets below First are skipped.
func (l *Log) scanRange(lo, hi uint64, fn func(rec *record, at uint64)) error {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return ErrClosed
	}
	lo = max(lo, l.firstLocked())
	hi = min(hi, l.end)
	var segs []uint64
	if lo < hi {
		i, j := segIndex(l.segs, lo), segIndex(l.segs, hi-1)
		if i >= 0 {
			segs = slices.Clone(l.segs[i : j+1])
		}
	}
	l.mu.RUnlock()
	for _, seg := range segs {
		err := l.scanSegment(seg, func(rec *record, at uint64) bool {
			if at >= hi {
				return false
			}
			if at >= lo || at+rec.span() > lo {
				fn(rec, at)
			}
			return true
		})
		if errors.Is(err, fs.ErrNotExist) {
			continue // dropped by retention meanwhile
		}
		if err != nil {
			return fmt.Errorf("outlog: scan segment %s: %w", segName(seg), err)
		}
	}
	return nil
}
