package attach

import "termkeep/internal/wire"

// attach's half of the output lane (docs/architecture.md, Lanes): it
// offers the server its terminal once it has written all the output it was
// sent, and from then on writes nothing of its own until
// the server says no lane runs (a lane-end frame). Its own lines (a
// notice, a paint, the resets at detach) wait for that: it asks for its
// terminal back (lane-off) and writes them when the lane-end comes.
//
// The input half (wire/lanein.go): on the server's lane-in, attach stops
// reading its terminal and answers lane-in, and the holder reads it; what
// the holder hands back (a lane-input) attach takes as typed, then answers
// lane-in again while the lane runs. It reads again at every lane end.

// laneGate is attach's lane state for one connection. It does no I/O: the
// caller sends what it returns. Its zero value is idle.
type laneGate struct {
	state   laneState
	offered int64    // the offset of the last offer (valid while offered)
	queued  [][]byte // attach's own lines, waiting for the lane-end
	handed  bool     // attach stopped reading its terminal for this lane
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

// laneIn takes the server's lane-in: it says whether to stop reading the
// terminal and answer lane-in, which attach does once per lane, for a lane
// that runs and that it does not want back, and only when it may (read-
// write, input lanes on, a detach key that is not plain typing). Any other
// is stale: its lane ended, or attach asked for the terminal back.
func (g *laneGate) laneIn(may bool) (pause bool) {
	if !may || g.state != laneOffered || g.handed {
		return false
	}
	g.handed = true
	return true
}

// handBack follows a lane-input that attach took as typed: it says whether
// to answer lane-in again, so that the holder reads on: only for the lane
// it stopped reading for, still running, and when attach stays (the bytes
// held no detach key, attach is not ending).
func (g *laneGate) handBack(staying bool) (again bool) {
	return staying && g.handed && g.state == laneOffered
}

// ended takes a lane-end: attach may write again, starting with what it
// kept, and reads its terminal again if it had stopped (resume).
func (g *laneGate) ended() (write [][]byte, resume bool) {
	write, resume = g.queued, g.handed
	*g = laneGate{}
	return write, resume
}

// lost takes a connection that ended: the terminal is attach's again (the
// holder closes a lane whose server connection ends), but how far a lane
// wrote only the holder knows unless it was idle: claim says the next
// connection asks it (resume.lost).
func (g *laneGate) lost() (write [][]byte, claim, resume bool) {
	claim = g.state != laneIdle
	write, resume = g.ended()
	return write, claim, resume
}

// laneConds are the conditions of attach's lanes that its flags and
// terminal fix: only a read-write attach drawing on its own terminal's
// normal screen takes one, and not under TERMKEEP_ECHO_LANE=off (nor an
// input lane under output, or with a detach key that is plain typing,
// which the holder would type).
type laneConds struct {
	fd       int  // the terminal's descriptor a lane writes to (-1: none)
	reader   bool // attach reads a raw descriptor it can pause (rawTerm)
	readOnly bool
	alt      bool // --alt-screen: it filters the switches a lane would write as they are
	off      bool // no lanes
	inputOff bool // no input lanes
	keyTyped bool // the detach key is plain typing
}

func newLaneConds(cfg Config, rt *rawTerm) laneConds {
	l := laneConds{fd: -1, readOnly: cfg.ReadOnly, alt: cfg.AltScreen,
		off: cfg.Lanes == "off", inputOff: cfg.Lanes == "off" || cfg.Lanes == "output",
		keyTyped: cfg.DetachKey >= 0 && wire.PlainTyping([]byte{byte(cfg.DetachKey)})}
	if rt != nil {
		l.fd, l.reader = rt.fd, true
	}
	return l
}

// output reports whether attach may offer its terminal for an output lane
// now, on a server of version: it draws the session's bytes as they are
// (not from the model, no redraw due), from a known offset, and is not
// ending.
func (l laneConds) output(version int, redrawing bool, off int64, leaving bool) bool {
	return l.fd >= 0 && !l.readOnly && !l.alt && !l.off && wire.ViewerLanes(version) &&
		!redrawing && off >= 0 && !leaving
}

// input reports whether attach may stop reading its terminal for an input
// lane, on a server of version (and the terminal's foreground its own,
// which the caller asks last: it reads /proc).
func (l laneConds) input(version int, leaving bool) bool {
	return l.reader && !l.readOnly && !l.alt && !l.inputOff && !l.keyTyped &&
		wire.InputLanes(version) && !leaving
}
