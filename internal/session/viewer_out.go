package session

import (
	"errors"
	"io"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/session/flow"
	"termkeep/internal/wire"
)

// viewerChunk bounds one Output frame sent to a viewer.
const viewerChunk = 256 << 10

// writeLoop sends output as p decides (package flow): from the in-memory
// window when it holds the offset and from the log on disk otherwise,
// until the session ends or the viewer leaves. It reads the clock once per
// pass for p's judgement, and around each output write to time it.
func (v *viewer) writeLoop(l *outlog.Log, p flow.Progress) error {
	defer v.leave()
	w := &outWriter{v: v, l: l, p: p}
	defer w.closeCursor()
	if v.lane != nil {
		w.lanePoke = v.lane.poke
		defer v.endLanes()
	}
	for {
		if stop, err := w.step(); stop {
			return err
		}
	}
}

// outWriter is a viewer's write loop (writeLoop): its flow, where it
// reads the log, and when a refused lane may be offered again.
type outWriter struct {
	v         *viewer
	l         *outlog.Log
	p         flow.Progress
	cur       *outlog.Cursor // reads the log, for a viewer behind the window
	buf       []byte
	lanePoke  chan struct{} // nil: never ready
	laneRetry time.Time
}

// step makes one pass of the write loop: it tells the viewer what changed
// (the viewers, the log's state, the term mode), runs its lane, tells it
// a size change due at its offset, and then does what its flow decides.
// stop says the loop ends, with err.
func (w *outWriter) step() (stop bool, err error) {
	v := w.v
	if !v.waiter {
		if err := v.sendState(); err != nil {
			return true, err
		}
	}
	if v.lane != nil {
		hold, err := v.laneStep(w.l, &w.p, w.resyncNow, &w.laneRetry) // viewer_lane.go
		if err != nil {
			return true, err
		}
		if hold {
			select {
			case <-w.lanePoke:
			case <-v.gone:
				return true, nil
			}
			return false, nil
		}
	}
	off := w.p.Next()
	// The session's size changes are told in order with the output:
	// the bytes after one were printed at the new size.
	chunk := viewerChunk
	if !v.waiter {
		told, n, err := v.sizeStep(off, chunk)
		if err != nil {
			return true, err
		}
		if told {
			return false, nil
		}
		chunk = n
	}
	parts, end, exit, changed := v.h.window(off, chunk)
	a := w.p.Observe(v.h.now(), flow.Observation{
		End: end, Acking: v.acking.Load(), Acked: v.acked.Load(), Draining: v.h.draining,
	})
	switch a.Kind {
	case flow.Resync:
		err := w.resync(end, a.Why)
		return err != nil, err
	case flow.AwaitAck:
		select {
		case <-v.ackCh:
		case <-changed:
		case <-v.gone:
			return true, nil
		case <-time.After(time.Second):
		}
		return false, nil
	case flow.CaughtUp:
		return w.caughtUp(exit, changed)
	}
	if len(parts) > 0 {
		n := 0
		for _, part := range parts {
			n += len(part)
		}
		err := w.sendOutput(n, func(ww *wire.Writer) error { return ww.OutputParts(off, parts) })
		return err != nil, err
	}
	return w.fromLog(off, chunk, end)
}

// sendState sends the viewers, log state and term-mode frames that are
// due.
func (v *viewer) sendState() error {
	if err := v.sendViewers(); err != nil {
		return err
	}
	if err := v.sendLogState(); err != nil {
		return err
	}
	return v.sendTermMode() // termmode.go
}

// sendOutput sends an output frame of n bytes, timed for the flow.
func (w *outWriter) sendOutput(n int, fn func(*wire.Writer) error) error {
	began := w.v.h.now()
	err := w.v.send(fn)
	w.p.Sent(n, began, w.v.h.now())
	return err
}

// resync skips the viewer to the present. A snapshot sent for slowness
// counts as drawn until the viewer acks past it (Progress.Resynced says
// when).
func (w *outWriter) resync(end uint64, why flow.Why) error {
	v := w.v
	at, err := v.resync(w.l, w.p.Next(), end, why)
	if err != nil {
		return err
	}
	if w.p.Resynced(at) && v.acking.Load() {
		v.acked.Store(at)
	}
	return nil
}

func (w *outWriter) resyncNow(end uint64) error { return w.resync(end, flow.Why{}) }

// caughtUp ends the loop with the exit once the session has ended, and
// else waits for something to send: output, a change to tell, the lane,
// or the time a refused lane may be offered again.
func (w *outWriter) caughtUp(exit *wire.Exit, changed chan struct{}) (stop bool, err error) {
	v := w.v
	if exit != nil {
		e := *exit
		return true, v.send(func(w *wire.Writer) error { return w.JSON(wire.TypeExit, e) })
	}
	if v.stateDue() {
		// It changed between the sends above and the look at the
		// window: changed is already the channel after it.
		return false, nil
	}
	var retry <-chan time.Time
	var t *time.Timer
	if !w.laneRetry.IsZero() {
		// A lane refused: the offer is taken again then.
		t = time.NewTimer(w.laneRetry.Sub(v.h.now()))
		retry = t.C
	}
	select {
	case <-changed:
	case <-w.lanePoke:
	case <-retry:
	case <-v.gone:
	}
	if t != nil {
		t.Stop()
	}
	return v.left(), nil
}

// fromLog sends the viewer, behind the window, what the log on disk has
// at off (at most chunk bytes, below end), or tells it what the log
// cannot give.
func (w *outWriter) fromLog(off uint64, chunk int, end uint64) (stop bool, err error) {
	v, l := w.v, w.l
	if w.cur == nil {
		w.cur = l.Cursor(off)
		w.buf = make([]byte, viewerChunk)
	} else if w.cur.Offset() != off {
		w.cur.Seek(off)
	}
	n, err := w.cur.Read(w.buf[:min(uint64(chunk), end-off)])
	var gap *outlog.GapError
	switch {
	case n > 0:
		err := w.sendOutput(n, func(ww *wire.Writer) error { return ww.Output(off, w.buf[:n]) })
		return err != nil, err
	case errors.Is(err, outlog.ErrCompacted):
		l.Refresh()
		a := w.p.Gone(end, l.First())
		if a.Kind == flow.Resync {
			err := w.resync(end, a.Why)
			return err != nil, err
		}
		return w.gap(a.From, a.To)
	case errors.As(err, &gap):
		// Never logged (a full disk): lost to a viewer this far behind.
		return w.gap(gap.Start, gap.End)
	case errors.Is(err, outlog.ErrCorrupt):
		// Damaged bytes are lost; say so and carry on after them.
		next := flow.Forward(off, l.SkipCorrupt(off), end)
		v.h.log.Error("output log is damaged; skipping", "from", off, "to", next, "err", err)
		return w.gap(off, next)
	case errors.Is(err, outlog.ErrClosed):
		// The host was closed under the viewer (a restore replaced
		// it, or the server is stopping): let go without an error, so
		// the client reconnects and reaches the session's new host.
		return true, err
	case err != nil && err != io.EOF:
		msg := "read output log: " + err.Error()
		v.send(func(w *wire.Writer) error { return w.Error(wire.CodeInternal, msg) })
		return true, err
	}
	if to, ok := v.h.unlogged(l, off); ok {
		return w.gap(off, to)
	}
	// The log has not caught up with what the holder sent (it is
	// written first, so this is a refresh away); wait a moment. A poll:
	// the log is the holder's file, and nothing tells this process that
	// it grew.
	select {
	case <-v.gone:
		return true, nil
	case <-time.After(5 * time.Millisecond):
	}
	return false, nil
}

// gap tells the viewer that [from, to) is gone, and moves it past.
func (w *outWriter) gap(from, to uint64) (stop bool, err error) {
	if err := w.v.send(func(ww *wire.Writer) error { return ww.Gap(from, to) }); err != nil {
		return true, err
	}
	w.p.Skipped(to)
	return false, nil
}

func (w *outWriter) closeCursor() {
	if w.cur != nil {
		w.cur.Close()
	}
}

// endLanes ends the viewer's lanes as its write loop ends.
func (v *viewer) endLanes() {
	v.lane.mu.Lock()
	open := v.lane.gate.Open()
	v.lane.mu.Unlock()
	if open {
		v.h.revokeLane(v) // its end, when it comes, finds nobody
	}
	v.lane.close()
	v.endBack() // viewer_lanein.go
}

// sizeStep tells the viewer the session's size change at off, if one is
// due there (told), or else returns n cut at the next change: the bytes
// after a change were printed at the new size.
func (v *viewer) sizeStep(off uint64, n int) (told bool, cut int, err error) {
	c, ok := v.h.nextSize(off, v.sizeSeq)
	if !ok {
		return false, n, nil
	}
	if c.off == off {
		if err := v.send(func(w *wire.Writer) error { return w.Resized(off, c.cols, c.rows) }); err != nil {
			return false, 0, err
		}
		v.sizeSeq = c.seq
		return true, n, nil
	}
	return false, int(min(uint64(n), c.off-off)), nil
}

// resync skips a viewer that has been sent the output below had to the
// present: a snapshot at (at least) end, from whose offset its output
// continues. The snapshot keeps what the viewer has drawn and adds the
// history it missed, up to the scrollback its hello asked for
// (history.go).
func (v *viewer) resync(l *outlog.Log, had, end uint64, why flow.Why) (uint64, error) {
	// Up to the model's next mark first (history.go), so that the
	// snapshot adds exactly the lines that scrolled away after it.
	if to := nextMark(had); to > had && to <= end && !why.Gone {
		if v.sendRange(l, had, to) {
			had = to
		}
	}
	data, at, cols, rows, err := v.h.resyncSnapshot(v.ctx, end, had, v.scrollback)
	if err != nil {
		return 0, err
	}
	// The terminal questions in what it skips are the model's to answer.
	v.skipQuestions(had, at)
	// The snapshot is drawn at the session's size then, which the
	// viewer may not have been told yet.
	if err := v.send(func(w *wire.Writer) error { return w.Resized(at, cols, rows) }); err != nil {
		return 0, err
	}
	v.h.counts.resyncs.Add(1)
	v.h.meter.Resyncs.Add(1)
	args := []any{"viewer", v.id, "offset", at,
		"behind", why.Behind, "read", why.Read, "over", why.Over.Round(time.Millisecond), "write_blocked", why.Blocked, "bytes_gone", why.Gone}
	if why.Gone {
		args = append(args, "log_first", why.First)
	}
	v.h.log.Info("viewer fell behind; skipped it to the present with a snapshot", args...)
	if err := v.send(func(w *wire.Writer) error { return w.Snapshot(at, data) }); err != nil {
		return 0, err
	}
	return at, nil
}

// sendRange sends the output in [from, to), from the window or the log,
// and reports whether all of it went.
func (v *viewer) sendRange(l *outlog.Log, from, to uint64) bool {
	for from < to {
		if parts, _, _, _ := v.h.window(from, int(to-from)); len(parts) > 0 {
			n := 0
			for _, part := range parts {
				n += len(part)
			}
			if v.send(func(w *wire.Writer) error { return w.OutputParts(from, parts) }) != nil {
				return false
			}
			from += uint64(n)
			continue
		}
		cur := l.Cursor(from)
		buf := make([]byte, to-from)
		n, _ := cur.Read(buf)
		cur.Close()
		if n == 0 || v.send(func(w *wire.Writer) error { return w.Output(from, buf[:n]) }) != nil {
			return false
		}
		from += uint64(n)
	}
	return true
}

// sendViewers sends a Viewers frame when the set of viewers or the size
// changed since the last one this viewer got.
func (v *viewer) sendViewers() error {
	h := v.h
	h.mu.Lock()
	if v.sentVer == h.room.ver {
		h.mu.Unlock()
		return nil
	}
	v.sentVer = h.room.ver
	msg := h.viewersLocked()
	msg.You = v.id
	h.mu.Unlock()
	return v.send(func(w *wire.Writer) error { return w.JSON(wire.TypeViewers, msg) })
}

// stateDue reports whether the viewers, log state or term-mode frame is
// due to the viewer: changed since the write loop last sent it.
func (v *viewer) stateDue() bool {
	if v.waiter {
		return false
	}
	h := v.h
	h.mu.Lock()
	defer h.mu.Unlock()
	return v.sentVer != h.room.ver || (v.version >= 2 && v.sentLogVer != h.reports.logVer) ||
		(v.version >= 7 && h.reports.mode != nil && v.sentModeVer != h.reports.modeVer)
}

// sendLogState tells the viewer when the session's log stops or resumes.
func (v *viewer) sendLogState() error {
	h := v.h
	if v.version < 2 {
		return nil // log frames came with version 2
	}
	h.mu.Lock()
	if v.sentLogVer == h.reports.logVer {
		h.mu.Unlock()
		return nil
	}
	v.sentLogVer = h.reports.logVer
	st := h.reports.log
	h.mu.Unlock()
	return v.send(func(w *wire.Writer) error { return w.JSON(wire.TypeLog, st) })
}
