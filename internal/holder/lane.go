package holder

import (
	"bytes"
	"os"
	"syscall"
	"time"

	"termkeep/internal/fdpass"
	"termkeep/internal/rawio"
	"termkeep/internal/termq"
	"termkeep/internal/wire"
)

// The output lane (docs/architecture.md, Lanes): a terminal
// the server handed over, to which the pty's reader writes each chunk
// right after logging it, so that an echo reaches an attached terminal
// without waking the server and attach. The log stays first, the writes
// never wait, and the lane's start and end offsets say exactly which bytes
// it wrote, so the server sends the rest.

// laneEnv turns lanes off for A/B measurements: every lane ends at once
// at its start.
const laneEnv = "TERMKEEP_ECHO_LANE"

// maxLaneEnds bounds the lane ends waiting for the forwarder: a server
// that opens lanes faster than it reads its socket is malformed.
const maxLaneEnds = 64

// lane is the lane's state: no I/O, no lock (the holder's ptyMu guards it).
// Every start is answered by exactly one end, an offset: the lane wrote to
// its terminal every byte from its start below the end, and none at or
// above it.
//
// A terminal that does not take a chunk at once (it is slower than the
// child for a moment: a flood) does not end the lane: what it did not
// take waits in a queue of at most laneQueueMax bytes, which a writer
// hands it as it takes them, and the chunks after it join the queue. Only
// a terminal that falls further behind ends the lane, at the first byte
// it did not take; the server sends the rest. The pty's reader never
// waits for the terminal.
type lane struct {
	open    bool
	token   uint64 // the open lane's (wire.Hello.LaneToken; 0: an older server's)
	next    uint64 // the offset of the next byte the lane is owed: those below were written or queued
	written uint64 // the terminal took every byte below it; [written, next) are queued
	// back are keys the lane's reader handed back (lanein.go) that the
	// server has not yet answered with a lane-read: a server that dies
	// meanwhile may have lost them.
	back []byte
	// records are the last lanes' ends by token, newest last, at most
	// wire.MaxLaneRecords: what a claim (wire/laneclaim.go) is answered.
	records []laneRecord
}

// laneRecord is where token's last lane ended, and whether the token was
// claimed: its connection is gone, so it may open no lane again.
type laneRecord struct {
	token, end uint64
	claimed    bool
	back       []byte // keys handed back and never answered, as lane.back
}

// laneQueueMax bounds the bytes a lane's terminal may be behind: past it,
// the lane ends and the server, which keeps a viewer's queue of its own,
// takes over.
const laneQueueMax = 256 << 10

// laneHow is what the pty's reader does with a chunk.
type laneHow uint8

const (
	laneSkip  laneHow = iota // not the lane's
	laneWrite                // write it to the terminal now
	laneQueue                // append it to the queue: the terminal is behind
)

// start decides whether a lane asked for at offset at opens, given the
// log's end and whether lanes are allowed and the file is fit (a
// non-blocking terminal). A lane opens only at the log's end: before it,
// the bytes in between are the server's to send; past it, they do not
// exist. A lane still open ends first (at its next byte). It returns the
// ends to report, in order.
func (l *lane) start(at, end uint64, allowed bool, token uint64) (ends []uint64) {
	ends = l.stop()
	r := l.record(token)
	if !allowed || at != end || r != nil && r.claimed {
		return append(ends, at)
	}
	if r != nil {
		// The viewer offered this lane after its last one's end, which
		// followed any keys handed back: it has them.
		r.back = nil
	}
	l.open, l.token, l.next, l.written, l.back = true, token, at, at, nil
	return ends
}

// handBack records keys handed back to the server (lanein.go) until it
// answers (answered): a claim hands them on if it never did.
func (l *lane) handBack(p []byte) { l.back = append(l.back[:0], p...) }

// answered records a lane-read: the keys handed back have gone through.
func (l *lane) answered() { l.back = l.back[:0] }

// claim ends token's lane if it runs, and marks the token claimed: its
// lanes end at their start from now on. It returns the ends to report to
// the lane's owner, where token's last lane ended (0: none known), and
// the keys its reader handed back that no lane-read answered, once.
func (l *lane) claim(token uint64) (ends []uint64, end uint64, back []byte) {
	if token == 0 {
		return nil, 0, nil
	}
	if l.open && l.token == token {
		ends = l.stop()
	}
	r := l.record(token)
	if r == nil {
		r = l.remember(token)
	}
	r.claimed = true
	back, r.back = r.back, nil
	return ends, r.end, back
}

// record returns token's record, or nil. Token 0 (an older server's
// lanes) has none.
func (l *lane) record(token uint64) *laneRecord {
	for i := range l.records {
		if token != 0 && l.records[i].token == token {
			return &l.records[i]
		}
	}
	return nil
}

// remember returns token's record, made newest: the oldest is forgotten
// past wire.MaxLaneRecords.
func (l *lane) remember(token uint64) *laneRecord {
	r := laneRecord{token: token}
	for i := range l.records {
		if l.records[i].token == token {
			r = l.records[i]
			l.records = append(l.records[:i], l.records[i+1:]...)
			break
		}
	}
	if len(l.records) >= wire.MaxLaneRecords {
		l.records = append(l.records[:0], l.records[1:]...)
	}
	l.records = append(l.records, r)
	return &l.records[len(l.records)-1]
}

// chunk decides what becomes of a chunk logged at [off, off+n): written
// to the terminal if it is the lane's next and nothing is queued, queued
// behind what is. Bytes the lane never saw (a mark the holder logged
// itself, a chunk the log refused) end it where it is, and so does a
// queue that would grow past laneQueueMax. So does a chunk that asks the
// terminal a question (asks): the server must record a question before
// its answer can come, and the terminal answers what it is written at
// once, while the server has the output only when the forwarder sends it.
// It returns the ends to report.
func (l *lane) chunk(off uint64, n int, asks bool) (how laneHow, ends []uint64) {
	if !l.open || n == 0 {
		return laneSkip, nil
	}
	if off != l.next || asks {
		return laneSkip, l.stop()
	}
	if l.written < l.next {
		if l.next-l.written+uint64(n) > laneQueueMax {
			return laneSkip, l.stop()
		}
		l.next += uint64(n)
		return laneQueue, nil
	}
	return laneWrite, nil
}

// wrote records that the terminal took wrote of the n bytes at off (err
// from the write). What it did not take is to be queued (rest), unless the
// write failed other than for a full terminal: that ends the lane after
// what it took. It returns the ends to report.
func (l *lane) wrote(off uint64, n, wrote int, err error) (rest int, ends []uint64) {
	if !l.open {
		return 0, nil
	}
	w := max(wrote, 0)
	l.written, l.next = off+uint64(w), off+uint64(n)
	if err != nil && err != syscall.EAGAIN || uint64(n-w) > laneQueueMax {
		return 0, l.stop()
	}
	return n - w, nil
}

// flushed records that the terminal took k more bytes of the queue (err
// from the write; EAGAIN: it is full for now). A failed write ends the
// lane after what it took. It returns the ends to report.
func (l *lane) flushed(k int, err error) (ends []uint64) {
	if !l.open {
		return nil
	}
	l.written = min(l.written+uint64(max(k, 0)), l.next)
	if err != nil && err != syscall.EAGAIN {
		return l.stop()
	}
	return nil
}

// stop ends an open lane after the last byte its terminal took.
func (l *lane) stop() (ends []uint64) {
	if !l.open {
		return nil
	}
	l.open = false
	if l.token != 0 {
		r := l.remember(l.token)
		r.end, r.back = l.written, bytes.Clone(l.back)
	}
	l.back = l.back[:0]
	return []uint64{l.written}
}

// laneFile is the terminal of the open lane, and the connection that
// opened it (the one its ends go to). The holder's ptyMu guards it.
type laneFile struct {
	f      *os.File
	fd     uintptr
	owner  *upstream
	reader *laneReader // reading the terminal too (lanein.go), once asked
	// queue[head:] are the lane's bytes the terminal has yet to take
	// ([lane.written, lane.next)); writing: a laneWriter hands them over.
	queue   []byte
	head    int
	writing bool
}

// openLane opens a lane for u at offset at on the terminal fd (the
// holder takes it over: it is closed whatever happens). Called by u's
// reader.
func (h *holder) openLane(u *upstream, at, token uint64, fd int) {
	f := os.NewFile(uintptr(fd), "lane")
	fit := f != nil && fdpass.NonBlockingTerminal(fd)
	h.ptyMu.Lock()
	defer h.ptyMu.Unlock()
	ends := h.lane.stop() // a lane still open ends first, its file with it
	h.laneEndedLocked(ends)
	ends = append(ends, h.lane.start(at, h.out.End(), fit && !h.laneDisabled, token)...)
	if h.lane.open {
		h.laneFile = laneFile{f: f, fd: uintptr(fd), owner: u}
	} else if f != nil {
		f.Close()
	}
	u.laneEnds(ends)
}

// closeLane ends u's lane, if it has the open one, and reports the end to
// u (report false: u's connection is gone, nobody to tell).
func (h *holder) closeLane(u *upstream, report bool) {
	h.ptyMu.Lock()
	defer h.ptyMu.Unlock()
	if h.laneFile.owner != u {
		return
	}
	ends := h.lane.stop()
	h.laneEndedLocked(ends)
	if report {
		u.laneEnds(ends)
	}
}

// laneEndedLocked closes the lane's file once the lane has ended (its
// reader does, once out of its read). The caller holds ptyMu.
//
// A file is never closed here while its writer runs: closing waits for
// the writer, which may be waiting for ptyMu. The writer is woken and
// closes it itself.
func (h *holder) laneEndedLocked(ends []uint64) {
	if len(ends) > 0 && !h.lane.open && h.laneFile.f != nil {
		lf := h.laneFile
		if lf.writing {
			lf.f.SetWriteDeadline(time.Unix(1, 0)) // wakes it in the poller
		}
		switch {
		case lf.reader != nil:
			lf.reader.stop()
		case !lf.writing:
			lf.f.Close()
		}
		h.laneFile = laneFile{}
	}
}

// laneWrite hands a chunk just logged at off to the lane's terminal:
// written at once, without waiting, or queued behind what the terminal
// has yet to take (lane.chunk). The caller holds ptyMu; logged says
// whether the chunk has its offsets (appended, or kept in memory while the
// log is stopped).
func (h *holder) laneWrite(off uint64, p []byte, logged bool) {
	asks := false
	h.questions.Scan(p, off, func(termq.Kind, uint64) { asks = true })
	if !h.lane.open {
		return
	}
	if !logged {
		h.laneReport(h.lane.stop())
		return
	}
	how, ends := h.lane.chunk(off, len(p), asks)
	switch how {
	case laneWrite:
		n, err := tryWrite(h.laneFile.fd, p)
		var rest int
		rest, ends = h.lane.wrote(off, len(p), n, err)
		if rest > 0 {
			h.laneFile.enqueue(p[len(p)-rest:])
			h.startLaneWriter()
		}
	case laneQueue:
		h.laneFile.enqueue(p)
	}
	h.laneReport(ends)
}

// enqueue appends p to the queue, moving what is left of it to the front
// first so that it never grows past about laneQueueMax.
func (lf *laneFile) enqueue(p []byte) {
	if lf.head > 0 {
		n := copy(lf.queue, lf.queue[lf.head:])
		lf.queue, lf.head = lf.queue[:n], 0
	}
	lf.queue = append(lf.queue, p...)
}

// startLaneWriter starts the writer of the lane's queue, unless one runs.
// The caller holds ptyMu.
func (h *holder) startLaneWriter() {
	if h.laneFile.writing {
		return
	}
	h.laneFile.writing = true
	go h.laneWriter(h.laneFile.f)
}

// laneWriter hands the lane's queue to its terminal f as the terminal
// takes it, waiting for it in the runtime's poller, until the queue is
// empty or the lane has ended. Every write to a lane's terminal is made
// under ptyMu, so the queue's bytes keep their place among the chunks.
func (h *holder) laneWriter(f *os.File) {
	ours := func() bool { return h.laneFile.f == f && h.lane.open }
	rc, err := f.SyscallConn()
	if err == nil {
		err = rc.Write(func(fd uintptr) bool {
			h.ptyMu.Lock()
			defer h.ptyMu.Unlock()
			lf := &h.laneFile
			if !ours() {
				return true // the lane ended, its queue with it
			}
			n, werr := tryWrite(fd, lf.queue[lf.head:])
			lf.head += max(n, 0)
			if ends := h.lane.flushed(n, werr); len(ends) > 0 {
				h.laneReport(ends)
				return true
			}
			if lf.head == len(lf.queue) {
				// Drained: a burst's buffer is not kept for the next.
				lf.queue, lf.head, lf.writing = nil, 0, false
				return true
			}
			return false // the terminal is full: wait until it takes more
		})
	}
	h.ptyMu.Lock()
	if err != nil && ours() {
		// The terminal cannot be waited for: the lane ends where its
		// terminal stopped.
		h.laneReport(h.lane.stop())
	}
	ended := !ours()
	h.ptyMu.Unlock()
	if ended {
		f.Close() // after its reader, if it had one: closing twice is harmless
	}
}

func (h *holder) laneReport(ends []uint64) {
	if len(ends) == 0 {
		return
	}
	u := h.laneFile.owner
	h.laneEndedLocked(ends)
	u.laneEnds(ends)
}

// laneNote is what the forwarder tells the server of lanes, in order
// with the output: a lane's end (to the connection that opened it), or
// the answer to a claim (claimed: token's last lane ended at off).
type laneNote struct {
	off     uint64
	token   uint64
	claimed bool
	back    []byte // with claimed: keys handed back and never answered
}

// laneEnds queues lane ends for u's forwarder, which sends them once the
// output before them has gone, and wakes it. It never waits.
func (u *upstream) laneEnds(ends []uint64) {
	notes := make([]laneNote, len(ends))
	for i, e := range ends {
		notes[i] = laneNote{off: e}
	}
	u.laneNotes(notes)
}

// laneNotes queues notes for u's forwarder and wakes it.
func (u *upstream) laneNotes(notes []laneNote) {
	if u == nil || len(notes) == 0 {
		return
	}
	u.h.mu.Lock()
	over := len(u.ends)+len(notes) > maxLaneEnds
	if !over {
		u.ends = append(u.ends, notes...)
	}
	u.h.mu.Unlock()
	if over {
		u.c.Close() // a server that never reads its lane ends
		return
	}
	select {
	case u.notify <- struct{}{}:
	default:
	}
}

// dueLaneEnds takes the queued notes at or below sent, the offset up to
// which the forwarder has sent output: a server resumes a viewer at an
// end only once it has the bytes before it.
func (u *upstream) dueLaneEnds(sent uint64) []laneNote {
	u.h.mu.Lock()
	defer u.h.mu.Unlock()
	i := 0
	for i < len(u.ends) && u.ends[i].off <= sent {
		i++
	}
	due := u.ends[:i:i]
	u.ends = u.ends[i:]
	return due
}

// claimLane answers u's claim of token (wire/laneclaim.go): the token's
// lane, if it runs, ends (told to the connection that opened it, which
// may be gone), and u is told where its last lane ended once the output
// below that has gone to u.
func (h *holder) claimLane(u *upstream, token uint64) {
	h.ptyMu.Lock()
	ends, end, back := h.lane.claim(token)
	if len(ends) > 0 {
		h.laneReport(ends)
	}
	h.ptyMu.Unlock()
	u.laneNotes([]laneNote{{off: end, token: token, claimed: true, back: back}})
}

// tryWrite makes one write of p to fd, never waiting, and without
// telling the runtime (rawio): an ordinary system call would wake its
// monitor thread on another CPU for every echo.
func tryWrite(fd uintptr, p []byte) (int, error) { return rawio.WriteFD(fd, p) }
