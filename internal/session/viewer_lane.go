package session

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"termkeep/internal/fdpass"
	"termkeep/internal/outlog"
	"termkeep/internal/session/flow"
	"termkeep/internal/session/lanegate"
	"termkeep/internal/wire"
)

// A viewer's output lane (docs/architecture.md, Lanes): the
// holder writes the output to the viewer's terminal itself, and the
// viewer's stream is held at the lane's start until the lane ends
// (package lanegate decides). The viewer's reader (its offers), the
// holder connection's reader (lane ends) and the write loop meet here;
// only the write loop acts.

// FDTaker is a viewer connection that can carry file descriptors (a unix
// socket read with fdpass.Reader): Take returns the oldest one that came,
// or -1.
type FDTaker interface{ Take() int }

// viewerLane is a viewer's lane: its gate and its terminal.
type viewerLane struct {
	mu   sync.Mutex // guards gate, term, back and done
	gate lanegate.Gate
	term int           // the viewer's terminal, once handed over (-1: none); kept raw: an *os.File's Fd would make it blocking
	poke chan struct{} // one slot: wakes the write loop
	back [][]byte      // keys the holder handed back, for the write loop to send (viewer_lanein.go)
	done bool          // the write loop has ended: hand-backs go to the pty
	// token names this connection's lanes to the holder, claim the
	// earlier connection's whose lane's end the gate waits for
	// (wire/laneclaim.go); both fixed at the start.
	token, claim uint64
}

func newViewerLane(token uint64) *viewerLane {
	return &viewerLane{term: -1, poke: make(chan struct{}, 1), token: token}
}

func (l *viewerLane) wake() {
	select {
	case l.poke <- struct{}{}:
	default:
	}
}

func (l *viewerLane) do(fn func(g *lanegate.Gate)) {
	l.mu.Lock()
	fn(&l.gate)
	l.mu.Unlock()
	l.wake()
}

// offer handles a lane frame from the viewer: at, and the terminal that
// came with its first one (fd, -1: none).
func (l *viewerLane) offer(at uint64, fd int) {
	l.mu.Lock()
	if fd >= 0 {
		if l.term < 0 && fdpass.NonBlockingTerminal(fd) {
			l.term = fd
		} else {
			syscall.Close(fd)
		}
	}
	l.gate.Offer(at)
	l.mu.Unlock()
	l.wake()
}

func (l *viewerLane) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.term >= 0 {
		syscall.Close(l.term)
		l.term = -1
	}
}

// laneStep runs the viewer's gate until output may flow (false) or the
// viewer is held (true). It sends what the gate decides: a lane to the
// holder, its revocation, the bytes a lane wrote and its end, a
// snapshot when a lane's end is lost. retry is set to when a refused
// offer may be taken again.
func (v *viewer) laneStep(l *outlog.Log, p *flow.Progress, resync func(end uint64) error, retry *time.Time) (hold bool, err error) {
	h := v.h
	for {
		h.mu.Lock()
		s := h.laneSessionLocked()
		end := h.end
		vv := v.laneViewerLocked()
		h.mu.Unlock()
		v.lane.mu.Lock()
		vv.Terminal = v.lane.term >= 0
		// Taken with the step: keys handed back before a lane-end are
		// queued before the gate hears of it, so they go first.
		back := v.lane.takeBack()
		a := v.lane.gate.Step(h.now(), vv, s, p.Next(), end)
		v.lane.mu.Unlock()
		if err := v.sendBack(back); err != nil { // viewer_lanein.go
			return false, err
		}
		switch a.Kind {
		case lanegate.Stream:
			*retry = a.RetryAt
			return false, nil
		case lanegate.Hold:
			return true, nil
		case lanegate.Open:
			h.meter.LanesOpened.Add(1)
			if !h.openLane(v, a.At) {
				v.lane.do(func(g *lanegate.Gate) { g.Ended(a.At) })
			} else if err := v.offerInputLane(); err != nil { // viewer_lanein.go
				return false, err
			}
		case lanegate.Revoke:
			h.revokeLane(v)
		case lanegate.Claim:
			h.claimLane(v)
		case lanegate.Answer:
			if err := v.send(func(w *wire.Writer) error { return w.Uint64(wire.TypeLaneEnd, a.At) }); err != nil {
				return false, err
			}
		case lanegate.Written:
			if a.To > a.From {
				h.meter.Lanes.Add(1)
				h.meter.LaneBytes.Add(a.To - a.From)
			} else {
				h.meter.LanesRefused.Add(1)
			}
			if err := v.sendWritten(l, p, a.From, a.To); err != nil {
				return false, err
			}
			if err := v.send(func(w *wire.Writer) error { return w.Uint64(wire.TypeLaneEnd, a.To) }); err != nil {
				return false, err
			}
		case lanegate.Resync:
			if err := resync(end); err != nil {
				return false, err
			}
			at := p.Next()
			if err := v.send(func(w *wire.Writer) error { return w.Uint64(wire.TypeLaneEnd, at) }); err != nil {
				return false, err
			}
		}
	}
}

// laneSessionLocked is what the lane's gate knows of the session. The
// caller holds h.mu.
func (h *Host) laneSessionLocked() lanegate.Session {
	s := lanegate.Session{Ended: h.exit != nil, Cols: h.size.cols, Rows: h.size.rows, ReqCols: h.size.reqCols, ReqRows: h.size.reqRows,
		Lane: h.lanes.get() != nil}
	if h.up != nil {
		s.HolderVersion = h.up.version
	}
	return s
}

// laneViewerLocked is what the lane's gate knows of v, but for whether it
// handed over its terminal (under v.lane.mu). The caller holds v.h.mu.
func (v *viewer) laneViewerLocked() lanegate.Viewer {
	return lanegate.Viewer{
		Kind: v.opts.Kind, Local: v.opts.Local, ReadOnly: v.readOnly, Waiter: v.waiter,
		Version: v.version, Cols: v.sz.Cols, Rows: v.sz.Rows,
	}
}

// sendWritten tells the viewer the bytes [from, to) its lane wrote, with
// the size changes among them in their places, from the window or the
// log, and moves it on to to.
func (v *viewer) sendWritten(l *outlog.Log, p *flow.Progress, from, to uint64) error {
	for from < to {
		told, n, err := v.sizeStep(from, int(min(to-from, viewerChunk)))
		if err != nil {
			return err
		}
		if told {
			continue
		}
		parts, _, _, _ := v.h.window(from, n)
		if len(parts) == 0 {
			buf := make([]byte, n)
			k, err := readLogged(l, from, buf)
			if k == 0 {
				// Gone from the log too: the viewer's screen is right (the
				// lane wrote it), only its record of it is short.
				if err == nil {
					err = errors.New("nothing read")
				}
				v.h.log.Warn("bytes a lane wrote are gone; the viewer skips them", "from", from, "to", to, "err", err)
				break
			}
			parts = [][]byte{buf[:k]}
		}
		k := 0
		for _, part := range parts {
			k += len(part)
		}
		began := v.h.now()
		if err := v.send(func(w *wire.Writer) error { return w.LaneWritten(from, parts) }); err != nil {
			return err
		}
		p.Sent(k, began, v.h.now())
		from += uint64(k)
	}
	p.Skipped(to)
	return nil
}

// laneFrame handles a lane or lane-off frame from the viewer (its
// reader); it reports false for a viewer that may not send one. A
// terminal comes only from a read-write local terminal viewer, and is
// closed at once otherwise.
func (v *viewer) laneFrame(f wire.Frame) bool {
	if v.lane == nil {
		msg := fmt.Sprintf("a viewer of protocol version %d may not send %s frames", v.version, f.Type)
		v.send(func(w *wire.Writer) error { return w.Error(wire.CodeMalformed, msg) })
		return false
	}
	if f.Type == wire.TypeLaneOff {
		v.lane.do(func(g *lanegate.Gate) { g.Withdraw() })
		return true
	}
	at, _ := wire.ParseUint64(f.Type, f.Payload)
	fd := -1
	if t, ok := v.rw.(FDTaker); ok {
		fd = t.Take()
	}
	if fd >= 0 && !lanegate.MayHand(lanegate.Viewer{Kind: v.opts.Kind, Local: v.opts.Local, ReadOnly: v.readOnly, Waiter: v.waiter}) {
		syscall.Close(fd)
		fd = -1
	}
	v.lane.offer(at, fd)
	return true
}

// readLogged reads the log at off into buf, for bytes the holder has
// logged (a lane wrote them): the server's view of the log may be a
// refresh behind, so an end of the log is looked at again for a moment.
// It polls: the log is the holder's file, and nothing tells this process
// that it grew.
func readLogged(l *outlog.Log, off uint64, buf []byte) (int, error) {
	cur := l.Cursor(off)
	defer cur.Close()
	for range 200 {
		n, err := cur.Read(buf)
		if n > 0 || (err != nil && err != io.EOF) {
			return n, err
		}
		time.Sleep(5 * time.Millisecond)
		l.Refresh()
		cur.Seek(off)
	}
	return 0, io.EOF
}
