package holder

import (
	"os"

	"termkeep/internal/fdpass"
	"termkeep/internal/rawio"
	"termkeep/internal/termq"
)

// The output lane (docs/architecture.md, Echo through attach): a terminal
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
type lane struct {
	open bool
	next uint64 // the offset of the next byte the terminal is owed
}

// start decides whether a lane asked for at offset at opens, given the
// log's end and whether lanes are allowed and the file is fit (a
// non-blocking terminal). A lane opens only at the log's end: before it,
// the bytes in between are the server's to send; past it, they do not
// exist. A lane still open ends first (at its next byte). It returns the
// ends to report, in order.
func (l *lane) start(at, end uint64, allowed bool) (ends []uint64) {
	ends = l.stop()
	if !allowed || at != end {
		return append(ends, at)
	}
	*l = lane{open: true, next: at}
	return ends
}

// chunk decides whether a chunk logged at [off, off+n) goes to the lane's
// terminal: only the chunk right at its next byte. Bytes the lane never
// saw (a mark the holder logged itself, a chunk the log refused) end it
// where it is. So does a chunk that asks the terminal a question (asks):
// the server must record a question before its answer can come, and
// the terminal answers what it is written at once, while the server has
// the output only when the forwarder sends it. It returns the ends to
// report.
func (l *lane) chunk(off uint64, n int, asks bool) (write bool, ends []uint64) {
	if !l.open || n == 0 {
		return false, nil
	}
	if off != l.next || asks {
		return false, l.stop()
	}
	return true, nil
}

// wrote records that the terminal took wrote of the n bytes at off (err
// from the write): anything short of all of them ends the lane at the
// first byte it did not take. It returns the ends to report.
func (l *lane) wrote(off uint64, n, wrote int, err error) (ends []uint64) {
	if !l.open {
		return nil
	}
	l.next = off + uint64(max(wrote, 0))
	if wrote < n || err != nil {
		return l.stop()
	}
	return nil
}

// stop ends an open lane at its next byte.
func (l *lane) stop() (ends []uint64) {
	if !l.open {
		return nil
	}
	l.open = false
	return []uint64{l.next}
}

// laneFile is the terminal of the open lane, and the connection that
// opened it (the one its ends go to). The holder's ptyMu guards it.
type laneFile struct {
	f      *os.File
	fd     uintptr
	owner  *upstream
	reader *laneReader // reading the terminal too (lanein.go), once asked
}

// openLane opens a lane for u at offset at on the terminal fd (the
// holder takes it over: it is closed whatever happens). Called by u's
// reader.
func (h *holder) openLane(u *upstream, at uint64, fd int) {
	f := os.NewFile(uintptr(fd), "lane")
	fit := f != nil && fdpass.NonBlockingTerminal(fd)
	h.ptyMu.Lock()
	defer h.ptyMu.Unlock()
	ends := h.lane.stop() // a lane still open ends first, its file with it
	h.laneEndedLocked(ends)
	ends = append(ends, h.lane.start(at, h.out.End(), fit && !h.laneDisabled)...)
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
func (h *holder) laneEndedLocked(ends []uint64) {
	if len(ends) > 0 && !h.lane.open && h.laneFile.f != nil {
		if r := h.laneFile.reader; r != nil {
			r.stop()
		} else {
			h.laneFile.f.Close()
		}
		h.laneFile = laneFile{}
	}
}

// laneWrite writes a chunk just logged at off to the lane's terminal, once,
// without waiting: a terminal that does not take all of it ends the lane.
// The caller holds ptyMu; logged says whether the chunk has its offsets
// (appended, or kept in memory while the log is stopped).
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
	write, ends := h.lane.chunk(off, len(p), asks)
	if write {
		n, err := tryWrite(h.laneFile.fd, p)
		ends = h.lane.wrote(off, len(p), n, err)
	}
	h.laneReport(ends)
}

func (h *holder) laneReport(ends []uint64) {
	if len(ends) == 0 {
		return
	}
	u := h.laneFile.owner
	h.laneEndedLocked(ends)
	u.laneEnds(ends)
}

// laneEnds queues lane ends for u's forwarder, which sends them once the
// output before them has gone, and wakes it. It never waits.
func (u *upstream) laneEnds(ends []uint64) {
	if u == nil || len(ends) == 0 {
		return
	}
	u.h.mu.Lock()
	over := len(u.ends)+len(ends) > maxLaneEnds
	if !over {
		u.ends = append(u.ends, ends...)
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

// dueLaneEnds takes the queued lane ends at or below sent, the offset up
// to which the forwarder has sent output: a server resumes a viewer at an
// end only once it has the bytes before it.
func (u *upstream) dueLaneEnds(sent uint64) []uint64 {
	u.h.mu.Lock()
	defer u.h.mu.Unlock()
	i := 0
	for i < len(u.ends) && u.ends[i] <= sent {
		i++
	}
	due := u.ends[:i:i]
	u.ends = u.ends[i:]
	return due
}

// tryWrite makes one write of p to fd, never waiting, and without
// telling the runtime (rawio): an ordinary system call would wake its
// monitor thread on another CPU for every echo.
func tryWrite(fd uintptr, p []byte) (int, error) { return rawio.WriteFD(fd, p) }
