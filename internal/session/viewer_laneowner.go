package session

import (
	"errors"
	"net"
	"sync"
	"time"

	"termkeep/internal/fdpass"
	"termkeep/internal/session/lanegate"
	"termkeep/internal/wire"
)

// The host's side of lanes: the holder runs one lane at a time, for the
// viewer in its slot, and the host asks it to open, end and claim them and
// hands its answers to the viewers' gates (viewer_lane.go).

// laneSlot is the viewer whose lane the holder runs, or has been asked to
// end, until its lane-end comes: one at a time.
type laneSlot struct {
	mu    sync.Mutex // guards owner and moved
	owner *viewer
	moved chan struct{} // closed when owner next changes (nil: nobody waits)
}

// setLocked makes v the owner and wakes those waiting for a change.
func (s *laneSlot) setLocked(v *viewer) {
	s.owner = v
	if s.moved != nil {
		close(s.moved)
		s.moved = nil
	}
}

// ownsWait reports whether v is the owner and, if it is, returns a channel
// closed when the owner changes.
func (s *laneSlot) ownsWait(v *viewer) (bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owner != v {
		return false, nil
	}
	if s.moved == nil {
		s.moved = make(chan struct{})
	}
	return true, s.moved
}

// get returns the owner (nil: none).
func (s *laneSlot) get() *viewer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owner
}

// owns reports whether v is the owner.
func (s *laneSlot) owns(v *viewer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owner == v
}

// take makes v the owner, unless there is one; it reports whether it did.
func (s *laneSlot) take(v *viewer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owner != nil {
		return false
	}
	s.setLocked(v)
	return true
}

// release empties the slot if v owns it.
func (s *laneSlot) release(v *viewer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owner == v {
		s.setLocked(nil)
	}
}

// clear empties the slot and returns who owned it.
func (s *laneSlot) clear() *viewer {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.owner
	s.setLocked(nil)
	return o
}

// openLane asks the holder to open a lane for v at at, handing it v's
// terminal. It reports false when it could not be sent (lanegate.Openable
// says no, or v has no terminal): the lane ends there.
func (h *Host) openLane(v *viewer, at uint64) bool {
	h.mu.Lock()
	up := h.up
	ok := lanegate.Openable(h.laneSessionLocked(), at, h.end) && h.lanes.take(v)
	h.mu.Unlock()
	if !ok {
		return false
	}
	v.lane.mu.Lock()
	term := v.lane.term
	var err error
	if term < 0 {
		err = errors.New("no terminal")
	} else {
		err = up.sendWithFD(func(w *wire.Writer) error { return w.Lane(at, v.lane.token, up.version) }, term)
	}
	v.lane.mu.Unlock()
	if err != nil {
		h.lanes.release(v)
		return false
	}
	return true
}

// revokeLane asks the holder to end v's lane; its lane-end follows.
func (h *Host) revokeLane(v *viewer) {
	h.mu.Lock()
	up := h.up
	mine := h.lanes.owns(v)
	h.mu.Unlock()
	if mine && up != nil {
		up.frame(wire.TypeLaneOff, nil)
	}
}

// claimLane asks the holder where the lane of v's earlier connection
// ended; its lane-claimed answer goes to v by the token (laneClaimed). A
// claim that cannot be sent (the connection is going) is asked again on
// the next holder connection (Host.pokeLanes).
func (h *Host) claimLane(v *viewer) {
	h.mu.Lock()
	up := h.up
	h.mu.Unlock()
	if up != nil && wire.HolderAccepts(up.version, wire.TypeLaneClaim) {
		up.send(func(w *wire.Writer) error { return w.Uint64(wire.TypeLaneClaim, v.lane.claim) })
	}
}

// laneClaimed hands the holder's answer to a claim of token to the
// viewer that claimed it: the lane's end, and first any keys its reader
// handed back to a server that died with them (back), which the viewer
// takes as typed. With no such viewer left, they are written as input.
func (h *Host) laneClaimed(token, end uint64, back []byte) {
	for _, v := range h.laneViewers() {
		if token != 0 && v.lane.claim == token {
			if len(back) > 0 && v.lane.handBack(back) {
				back = nil
			}
			v.lane.do(func(g *lanegate.Gate) { g.Ended(end) })
		}
	}
	if len(back) > 0 {
		go h.orphanInput(back)
	}
}

// pokeLanes tells every viewer's gate that the holder connection changed
// (lost: the claims it was asked are asked again).
func (h *Host) pokeLanes(lost bool) {
	for _, v := range h.laneViewers() {
		v.lane.do(func(g *lanegate.Gate) {
			if lost && v.lane.claim != 0 {
				g.Lost()
			}
		})
	}
}

func (h *Host) laneViewers() []*viewer {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.room.members(func(v *viewer) bool { return v.lane != nil })
}

// laneEnded hands the holder's lane-end at x to the lane's viewer.
func (h *Host) laneEnded(x uint64) {
	if o := h.lanes.clear(); o != nil {
		o.lane.do(func(g *lanegate.Gate) { g.Ended(x) })
	}
}

// laneLost tells the lane's viewer that the connection that opened its
// lane is gone with its end: the holder closed the lane's terminal
// without saying where.
func (h *Host) laneLost(up *holderConn) {
	var o *viewer
	h.mu.Lock()
	if h.up == nil || h.up == up { // else a lane opened on the newer connection
		o = h.lanes.clear()
	}
	h.mu.Unlock()
	if o != nil {
		o.lane.do(func(g *lanegate.Gate) { g.Lost() })
	}
}

// endLane revokes v's lane, if the holder runs one for it, and waits up
// to timeout for its end: nothing reaches v's terminal by the lane after.
func (v *viewer) endLane(timeout time.Duration) {
	h := v.h
	h.revokeLane(v)
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		mine, moved := h.lanes.ownsWait(v)
		if !mine {
			return
		}
		select {
		case <-moved:
		case <-t.C:
			return
		}
	}
}

// sendWithFD sends the frames fn writes with the descriptor fd, within
// the connection's deadline, as send does.
func (u *holderConn) sendWithFD(fn func(*wire.Writer) error, fd int) error {
	uc, ok := u.c.(*net.UnixConn)
	if !ok {
		return errors.New("session: the holder's connection cannot carry a terminal")
	}
	return u.send(func(*wire.Writer) error {
		var b frameBuffer
		if err := fn(wire.NewWriter(&b)); err != nil {
			return err
		}
		return fdpass.Write(uc, b, fd)
	})
}

// frameBuffer collects frames to send in one write.
type frameBuffer []byte

func (b *frameBuffer) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}
