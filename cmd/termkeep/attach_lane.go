package main

// attach's half of the output lane (docs/architecture.md, Echo through
// attach): it offers the server its terminal once it has written all the
// output it was sent, and from then on writes nothing of its own until
// the server says no lane runs (a lane-end frame). Its own lines (a
// notice, a paint, the resets at detach) wait for that: it asks for its
// terminal back (lane-off) and writes them when the lane-end comes.

// laneGate is attach's lane state for one connection. It does no I/O: the
// caller sends what it returns. Its zero value is idle.
type laneGate struct {
	state   laneState
	offered int64    // the offset of the last offer (valid while offered)
	queued  [][]byte // attach's own lines, waiting for the lane-end
}

type laneState int

const (
	laneIdle        laneState = iota // attach writes its terminal
	laneOffered                      // the server may have opened a lane
	laneWithdrawing                  // lane-off sent; waiting for the lane-end
)

// idle reports whether attach may write to its terminal.
func (g *laneGate) idle() bool { return g.state == laneIdle }

// offer decides whether to offer a lane at off, the offset below which
// attach has written everything: only when it may (can), not already
// at off, and not while a lane-off waits for its answer.
func (g *laneGate) offer(off int64, can bool) bool {
	if !can || off < 0 || g.state == laneWithdrawing || (g.state == laneOffered && g.offered == off) {
		return false
	}
	g.state, g.offered = laneOffered, off
	return true
}

// own takes attach's own bytes b: it returns them to write now while
// idle; else it keeps them for the lane-end, and says whether to send a
// lane-off (once).
func (g *laneGate) own(b []byte) (now []byte, withdraw bool) {
	if g.state == laneIdle {
		return b, false
	}
	if len(b) > 0 {
		g.queued = append(g.queued, b)
	}
	withdraw = g.state == laneOffered
	g.state = laneWithdrawing
	return nil, withdraw
}

// withdraw asks for the terminal back with nothing to write (a detach):
// it says whether to send a lane-off.
func (g *laneGate) withdraw() bool {
	_, w := g.own(nil)
	return w
}

// ended takes a lane-end: attach may write again, starting with what it
// kept.
func (g *laneGate) ended() (write [][]byte) {
	write = g.queued
	*g = laneGate{}
	return write
}

// lost takes a connection that ended: the terminal is attach's again (the
// holder closes a lane whose server connection ends), but how far a lane
// wrote is unknown unless it was idle, so snapshot says to reconnect from
// a snapshot.
func (g *laneGate) lost() (write [][]byte, snapshot bool) {
	snapshot = g.state != laneIdle
	return g.ended(), snapshot
}
