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
	var cur *outlog.Cursor
	defer func() {
		if cur != nil {
			cur.Close()
		}
	}()
	var buf []byte
	sendOutput := func(n int, fn func(*wire.Writer) error) error {
		began := time.Now()
		err := v.send(fn)
		p.Sent(n, began, time.Now())
		return err
	}
	// A snapshot sent for slowness counts as drawn until the viewer acks
	// past it (Progress.Resynced says when).
	resync := func(end uint64, why flow.Why) error {
		at, err := v.resync(l, p.Next(), end, why)
		if err != nil {
			return err
		}
		if p.Resynced(at) && v.acking.Load() {
			v.acked.Store(at)
		}
		return nil
	}
	draining := v.h.draining
	var lanePoke chan struct{} // nil: never ready
	var laneRetry time.Time
	if v.lane != nil {
		lanePoke = v.lane.poke
		defer func() {
			v.lane.mu.Lock()
			open := v.lane.gate.Open()
			v.lane.mu.Unlock()
			if open {
				v.h.revokeLane(v) // its end, when it comes, finds nobody
			}
			v.lane.close()
			v.endBack() // viewer_lanein.go
		}()
	}
	resyncNow := func(end uint64) error { return resync(end, flow.Why{}) }
	for {
		if !v.waiter {
			if err := v.sendViewers(); err != nil {
				return err
			}
			if err := v.sendLogState(); err != nil {
				return err
			}
			if err := v.sendTermMode(); err != nil { // termmode.go
				return err
			}
		}
		if v.lane != nil {
			hold, err := v.laneStep(l, &p, resyncNow, &laneRetry) // viewer_lane.go
			if err != nil {
				return err
			}
			if hold {
				select {
				case <-lanePoke:
				case <-v.gone:
					return nil
				}
				continue
			}
		}
		off := p.Next()
		// The session's size changes are told in order with the output:
		// the bytes after one were printed at the new size.
		chunk := viewerChunk
		if !v.waiter {
			told, n, err := v.sizeStep(off, chunk)
			if err != nil {
				return err
			}
			if told {
				continue
			}
			chunk = n
		}
		parts, end, exit, changed := v.h.window(off, chunk)
		a := p.Observe(time.Now(), flow.Observation{
			End: end, Acking: v.acking.Load(), Acked: v.acked.Load(), Draining: draining,
		})
		switch a.Kind {
		case flow.Resync:
			if err := resync(end, a.Why); err != nil {
				return err
			}
			continue
		case flow.AwaitAck:
			select {
			case <-v.ackCh:
			case <-changed:
			case <-v.gone:
				return nil
			case <-time.After(time.Second):
			}
			continue
		case flow.CaughtUp:
			if exit != nil {
				e := *exit
				return v.send(func(w *wire.Writer) error { return w.JSON(wire.TypeExit, e) })
			}
			if v.stateDue() {
				// It changed between the sends above and the look at the
				// window: changed is already the channel after it.
				continue
			}
			var retry <-chan time.Time
			var t *time.Timer
			if !laneRetry.IsZero() {
				// A lane refused: the offer is taken again then.
				t = time.NewTimer(time.Until(laneRetry))
				retry = t.C
			}
			select {
			case <-changed:
			case <-lanePoke:
			case <-retry:
			case <-v.gone:
			}
			if t != nil {
				t.Stop()
			}
			if v.left() {
				return nil
			}
			continue
		}
		if len(parts) > 0 {
			n := 0
			for _, part := range parts {
				n += len(part)
			}
			if err := sendOutput(n, func(w *wire.Writer) error { return w.OutputParts(off, parts) }); err != nil {
				return err
			}
			continue
		}
		// Behind the window: read the log on disk.
		if cur == nil {
			cur = l.Cursor(off)
			buf = make([]byte, viewerChunk)
		} else if cur.Offset() != off {
			cur.Seek(off)
		}
		n, err := cur.Read(buf[:min(uint64(chunk), end-off)])
		var gap *outlog.GapError
		switch {
		case n > 0:
			if err := sendOutput(n, func(w *wire.Writer) error { return w.Output(off, buf[:n]) }); err != nil {
				return err
			}
			continue
		case errors.Is(err, outlog.ErrCompacted):
			l.Refresh()
			a := p.Gone(end, l.First())
			if a.Kind == flow.Resync {
				if err := resync(end, a.Why); err != nil {
					return err
				}
				continue
			}
			if err := v.send(func(w *wire.Writer) error { return w.Gap(a.From, a.To) }); err != nil {
				return err
			}
			p.Skipped(a.To)
			continue
		case errors.As(err, &gap):
			// Never logged (a full disk): lost to a viewer this far behind.
			if err := v.send(func(w *wire.Writer) error { return w.Gap(gap.Start, gap.End) }); err != nil {
				return err
			}
			p.Skipped(gap.End)
			continue
		case errors.Is(err, outlog.ErrCorrupt):
			// Damaged bytes are lost; say so and carry on after them.
			next := flow.Forward(off, l.SkipCorrupt(off), end)
			v.h.log.Error("output log is damaged; skipping", "from", off, "to", next, "err", err)
			if err := v.send(func(w *wire.Writer) error { return w.Gap(off, next) }); err != nil {
				return err
			}
			p.Skipped(next)
			continue
		case errors.Is(err, outlog.ErrClosed):
			// The host was closed under the viewer (a restore replaced
			// it, or the server is stopping): let go without an error, so
			// the client reconnects and reaches the session's new host.
			return err
		case err != nil && err != io.EOF:
			msg := "read output log: " + err.Error()
			v.send(func(w *wire.Writer) error { return w.Error(wire.CodeInternal, msg) })
			return err
		}
		if to, ok := v.h.unlogged(l, off); ok {
			if err := v.send(func(w *wire.Writer) error { return w.Gap(off, to) }); err != nil {
				return err
			}
			p.Skipped(to)
			continue
		}
		// The log has not caught up with what the holder sent (it is
		// written first, so this is a refresh away); wait a moment.
		select {
		case <-v.gone:
			return nil
		case <-time.After(5 * time.Millisecond):
		}
	}
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
	v.h.skipQuestions(v, had, at)
	// The snapshot is drawn at the session's size then, which the
	// viewer may not have been told yet.
	if err := v.send(func(w *wire.Writer) error { return w.Resized(at, cols, rows) }); err != nil {
		return 0, err
	}
	v.h.resyncs.Add(1)
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
	if v.sentVer == h.viewersVer {
		h.mu.Unlock()
		return nil
	}
	v.sentVer = h.viewersVer
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
	return v.sentVer != h.viewersVer || (v.version >= 2 && v.sentLogVer != h.logVer) ||
		(v.version >= 7 && h.termMode != nil && v.sentModeVer != h.termModeVer)
}

// sendLogState tells the viewer when the session's log stops or resumes.
func (v *viewer) sendLogState() error {
	h := v.h
	if v.version < 2 {
		return nil // log frames came with version 2
	}
	h.mu.Lock()
	if v.sentLogVer == h.logVer {
		h.mu.Unlock()
		return nil
	}
	v.sentLogVer = h.logVer
	st := h.logState
	h.mu.Unlock()
	return v.send(func(w *wire.Writer) error { return w.JSON(wire.TypeLog, st) })
}
