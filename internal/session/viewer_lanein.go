package session

import (
	"fmt"

	"termkeep/internal/session/lanegate"
	"termkeep/internal/session/sizepolicy"
	"termkeep/internal/wire"
)

// The input lane (docs/architecture.md, Lanes): while a
// viewer's output lane runs, the holder may also read that viewer's
// terminal and write plain typing to the pty itself. The server grants it
// to the lane's owner only (a lane-in to the viewer, its answer, then a
// lane-read to the holder), takes what the holder hands back to the
// viewer, and counts what the lane typed as the viewer's typing.

// inputLane returns the holder's connection and the pid for a lane-read
// of v's terminal, when v owns the lane and may have an input lane.
func (v *viewer) inputLane() (*holderConn, uint32, bool) {
	h := v.h
	h.mu.Lock()
	up := h.up
	mine := h.lanes.owns(v)
	vv := v.laneViewerLocked()
	h.mu.Unlock()
	if !mine || up == nil {
		return nil, 0, false
	}
	v.lane.mu.Lock()
	vv.Terminal = v.lane.term >= 0
	v.lane.mu.Unlock()
	pid, ok := lanegate.InputLane(vv, v.opts.Pid, up.version)
	return up, pid, ok
}

// offerInputLane tells v, whose lane has just been opened, that it may
// stop reading its terminal (the write loop, right after openLane).
func (v *viewer) offerInputLane() error {
	if _, _, ok := v.inputLane(); !ok {
		return nil
	}
	return v.send(func(w *wire.Writer) error { return w.Frame(wire.TypeLaneIn, nil) })
}

// laneIn handles a lane-in from the viewer (its reader): it reads its
// terminal no more, so the holder may, if v still owns the lane. One that
// comes after its lane ended is dropped: a viewer offers a new lane only
// after that end, so it cannot be taken for the next lane's. It reports
// false for a viewer that may not send one.
func (v *viewer) laneIn() bool {
	if v.lane == nil || !wire.InputLanes(v.version) {
		msg := fmt.Sprintf("a viewer of protocol version %d may not send %s frames", v.version, wire.TypeLaneIn)
		v.send(func(w *wire.Writer) error { return w.Error(wire.CodeMalformed, msg) })
		return false
	}
	up, pid, ok := v.inputLane()
	if !ok {
		return true
	}
	// Sent from the reader, so after any input frame the viewer sent
	// before it: the holder writes those first.
	if err := up.send(func(w *wire.Writer) error { return w.LaneRead(pid) }); err != nil {
		v.h.log.Debug("a lane-read was not sent; the lane ends with the connection", "err", err)
	}
	return true
}

// laneHandBack takes keys the holder read from the lane's terminal and did
// not type (holderconn's reader; p is the caller's to give): they go to
// the lane's viewer, which takes them as typed, or, with no viewer to
// take them, to the pty as input by the usual path.
func (h *Host) laneHandBack(p []byte) {
	h.meter.LaneHandBacks.Add(1)
	if o := h.lanes.get(); o != nil && o.lane.handBack(p) {
		return
	}
	h.log.Info("keys read by a lane came back with no viewer to take them; written as input", "bytes", len(p))
	// Not from this reader: a write to a holder that is writing to us
	// would wait on it. At most one hand-back is out per lane-read.
	go h.orphanInput(p)
}

// orphanInput writes keys a lane read to the pty through the arbiter as
// from no viewer: the typing goes, an answer to a question does not.
func (h *Host) orphanInput(p []byte) {
	if err := h.viewerInput(0, p, h.now()); err != nil {
		h.log.Warn("keys read by a lane were lost", "bytes", len(p), "err", err)
	}
}

// laneTyped records n bytes the holder's lane typed for its viewer as that
// viewer's typing (holderconn's reader).
func (h *Host) laneTyped(n uint64) {
	if n == 0 {
		return
	}
	now := h.now()
	h.stampInput()
	h.counts.inBytes.Add(n)
	h.meter.InputBytes.Add(n)
	h.meter.LaneTyped.Add(n)
	if o := h.lanes.get(); o != nil {
		h.viewerSize(o, sizepolicy.Type, 0, 0, now)
	}
}

// handBack queues keys for the write loop to send; false once it has
// ended.
func (l *viewerLane) handBack(p []byte) bool {
	l.mu.Lock()
	done := l.done
	if !done {
		l.back = append(l.back, p)
	}
	l.mu.Unlock()
	if !done {
		l.wake()
	}
	return !done
}

// takeBack returns the keys queued and empties the queue. l.mu is held.
func (l *viewerLane) takeBack() [][]byte {
	b := l.back
	l.back = nil
	return b
}

// sendBack sends the viewer the keys the holder handed back, before the
// gate's next step (and so before the lane-end that may follow). Keys it
// could not send are written as input.
func (v *viewer) sendBack(back [][]byte) error {
	for i, p := range back {
		if err := v.send(func(w *wire.Writer) error { return w.Frame(wire.TypeLaneInput, p) }); err != nil {
			for _, q := range back[i:] {
				v.h.orphanInput(q)
			}
			return err
		}
	}
	return nil
}

// endBack closes the queue as the write loop ends: keys in it, and any
// handed back later, are written as input.
func (v *viewer) endBack() {
	v.lane.mu.Lock()
	v.lane.done = true
	back := v.lane.takeBack()
	v.lane.mu.Unlock()
	for _, p := range back {
		v.h.orphanInput(p)
	}
}
