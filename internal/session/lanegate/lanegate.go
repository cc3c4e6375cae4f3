// Package lanegate decides, for one viewer, when the server opens an
// output lane to its terminal and when it revokes it (docs/architecture.md,
// Lanes). It does no I/O and reads no clock: the viewer's
// write loop feeds it what happened and does what it returns.
//
// The guarantees: a lane opens only for a viewer that may have one
// (Eligible), only at the offset the viewer said it has written up to,
// which must be both what the server has sent it and the session's end;
// while a lane runs the viewer is sent no output; every lane ends at an
// offset, and the viewer is told the bytes from the lane's start below it
// as written, then the output from it.
package lanegate

import (
	"math"
	"time"

	"termkeep/internal/wire"
)

// Viewer is what the server knows of a viewer that bears on a lane.
type Viewer struct {
	Kind     wire.ViewerKind
	Local    bool // on the server's unix socket, from the server's own uid
	ReadOnly bool
	Waiter   bool
	Terminal bool // it handed the server its terminal
	Version  int  // the protocol version agreed with it
	// Cols and Rows are its terminal's size as it last said.
	Cols, Rows uint16
}

// Session is what the server knows of the session that bears on a lane.
type Session struct {
	HolderVersion int  // 0: no holder connection
	Ended         bool // exited, or ending
	// Cols and Rows are the size the output is printed at; ReqCols and
	// ReqRows the size last asked of the holder (0: none), which the
	// output takes next.
	Cols, Rows       uint16
	ReqCols, ReqRows uint16
	// Lane says a lane runs on the holder's connection, any viewer's,
	// whose end has not come yet: a holder runs one at a time.
	Lane bool
}

// TerminalOwner reports whether v is a read-write terminal viewer on this
// machine, of the server's own user, that handed over its terminal: the
// only kind a lane may write to or read from.
func (v Viewer) TerminalOwner() bool { return MayHand(v) && v.Terminal }

// MayHand reports whether v may hand the server its terminal at all (a
// lane frame's descriptor is closed at once otherwise): a read-write
// terminal viewer on this machine, of the server's own user.
func MayHand(v Viewer) bool {
	return v.Kind == wire.ViewerCLI && v.Local && !v.ReadOnly && !v.Waiter
}

// InputLane decides whether the holder may read the terminal of v, whose
// lane it runs, for v's process pid, under a holder of holderVersion: it
// returns the pid to send in the lane-read. Only a terminal owner that
// speaks the input lane, whose process is known, under a holder that
// takes lane-read.
func InputLane(v Viewer, pid, holderVersion int) (uint32, bool) {
	if !v.TerminalOwner() || !wire.InputLanes(v.Version) || !wire.HolderAccepts(holderVersion, wire.TypeLaneRead) ||
		pid <= 0 || pid > math.MaxInt32 {
		return 0, false
	}
	return uint32(pid), true
}

// Eligible reports whether v may have a lane on s: a read-write terminal
// viewer on this machine, of the server's own user, that handed over its
// terminal, whose size is the session's (a lane writes the bytes as they
// are, which only a terminal of that size shows right), on a holder that
// has lanes.
func Eligible(v Viewer, s Session) bool {
	switch {
	case !v.TerminalOwner() || v.Version < 8:
		return false
	case s.HolderVersion < 7 || s.Ended:
		return false
	case v.Cols == 0 || v.Rows == 0 || v.Cols != s.Cols || v.Rows != s.Rows:
		return false
	case s.ReqCols != 0 && (s.ReqCols != v.Cols || s.ReqRows != v.Rows):
		return false // a resize to another size is on its way
	}
	return true
}

// Openable reports whether the holder of s can be sent a lane at at now,
// when the session's output ends at end: its connection takes lanes, no
// other lane runs on it, and at is still the end (output that came since
// the gate said Open would be written by the lane unseen by the viewer's
// stream; the lane ends at once at its start, and the gate tries again).
func Openable(s Session, at, end uint64) bool {
	return wire.HolderAccepts(s.HolderVersion, wire.TypeLane) && !s.Lane && at == end
}

// Retry bounds: a lane the holder ends at its start wrote nothing (the
// holder had more output than the server, or refuses lanes); the next try
// waits, doubling, so a holder that always refuses costs a frame every
// few seconds, not one per output.
const (
	FirstRetry = 50 * time.Millisecond
	MaxRetry   = 5 * time.Second
)

// Kind is what the write loop must do.
type Kind int

const (
	// Stream: no lane; send output as usual.
	Stream Kind = iota
	// Open: send the holder a lane at At with the viewer's terminal, and
	// send the viewer nothing until it ends.
	Open
	// Hold: a lane runs (or is being revoked); send the viewer no output.
	Hold
	// Revoke: send the holder lane-off, then Hold.
	Revoke
	// Written: send the viewer [From, To) as written by the lane, then a
	// lane-end at To; its output goes on from To.
	Written
	// Answer: send the viewer a lane-end at At (it asked for its
	// terminal back and no lane runs).
	Answer
	// Resync: the lane's end is lost (its holder connection went): send
	// the viewer a snapshot, then a lane-end at the snapshot's offset.
	Resync
	// Claim: send the holder a lane-claim of the viewer's earlier
	// connection's token, and send the viewer nothing until it is
	// answered (an Ended) or cannot be (Lost).
	Claim
)

// Action is one decision.
type Action struct {
	Kind     Kind
	At       uint64
	From, To uint64
	// RetryAt, with Stream, is when an offer turned down for a refusal
	// may be taken (zero: on the next change).
	RetryAt time.Time
}

// Gate is one viewer's lane state. Its zero value has no lane and no
// offer.
type Gate struct {
	offered  bool
	offer    uint64 // the viewer has written every byte below it
	withdraw bool   // the viewer asked for its terminal back
	open     bool
	start    uint64 // the open lane's start
	revoking bool   // lane-off sent
	lost     bool   // the open lane's holder connection went
	// claiming: the "lane" open is an earlier connection's, whose end is
	// asked of the holder (Claim); asked once it has been sent.
	claiming, asked bool
	ends            []uint64
	refusals        int
	retryAt         time.Time
}

// Offer records the viewer's offer: it has written everything below at.
// A lane already open ignores it (a viewer offers only while none runs;
// a late one is stale).
func (g *Gate) Offer(at uint64) {
	if g.open {
		return
	}
	g.offered, g.offer, g.withdraw = true, at, false
}

// Claim starts the gate of a viewer that resumes at at after losing a
// connection while a lane may have written to its terminal: it is held,
// as behind an open lane that started at at, until the holder says where
// that lane ended. A viewer that has no earlier lane to claim never calls
// it.
func (g *Gate) Claim(at uint64) {
	*g = Gate{open: true, start: at, claiming: true}
}

// Withdraw records the viewer asking for its terminal back.
func (g *Gate) Withdraw() { g.offered, g.withdraw = false, true }

// Ended records the holder's lane-end at x for the open lane.
func (g *Gate) Ended(x uint64) { g.ends = append(g.ends, x) }

// Lost records that the connection that opened the lane is gone: its end
// will never come.
//
// A claim asked on that connection is asked again on the next: a claim
// changes nothing the second time.
func (g *Gate) Lost() {
	switch {
	case g.claiming:
		g.asked = false
	case g.open:
		g.lost = true
	}
}

// Open reports whether a lane is open (the viewer is held).
func (g *Gate) Open() bool { return g.open }

// Step decides what the write loop does next, given the viewer, the
// session, the next offset the viewer is to be sent, the session's end
// and the time. It is called until it returns Stream (then output flows)
// or Hold (then the loop waits for a change).
func (g *Gate) Step(now time.Time, v Viewer, s Session, next, end uint64) Action {
	if g.open {
		if len(g.ends) > 0 {
			x := g.ends[0]
			g.ends = g.ends[1:]
			from := g.start
			claimed := g.claiming
			g.open, g.revoking, g.lost, g.claiming, g.asked = false, false, false, false, false
			g.offered = false // its offer was at the start: stale
			if x < from || x > end {
				// Never below its start (a claimed lane that ended
				// before the viewer's offset, or none: the viewer has
				// them all); never past what reached us (the holder
				// sends an end after the bytes before it): a holder
				// that says so has lost track of the lane.
				x = max(from, min(x, end))
			}
			switch {
			case claimed: // answered: nothing was refused
			case x == from:
				g.refusals++
				g.retryAt = now.Add(min(FirstRetry<<min(g.refusals-1, 10), MaxRetry))
			default:
				g.refusals, g.retryAt = 0, time.Time{}
			}
			g.withdraw = false // answered by the lane-end
			return Action{Kind: Written, From: from, To: x}
		}
		if g.lost {
			g.open, g.revoking, g.lost, g.offered, g.withdraw, g.claiming, g.asked = false, false, false, false, false, false, false
			return Action{Kind: Resync}
		}
		if g.claiming {
			switch {
			case g.asked:
				return Action{Kind: Hold}
			case s.HolderVersion == 0 && !s.Ended:
				return Action{Kind: Hold} // asked once a holder connection comes
			case s.Ended || s.HolderVersion < 10:
				// No holder can say where the lane ended (the session
				// ended, or an older holder): the screen is drawn anew.
				g.claiming, g.lost = false, true
				return g.Step(now, v, s, next, end)
			}
			g.asked = true
			return Action{Kind: Claim}
		}
		if !g.revoking && (g.withdraw || !Eligible(v, s)) {
			g.revoking = true
			return Action{Kind: Revoke}
		}
		return Action{Kind: Hold}
	}
	g.ends = g.ends[:0] // ends of no open lane: stale
	if g.withdraw {
		g.withdraw = false
		return Action{Kind: Answer, At: next}
	}
	if !g.offered || g.offer != next || next != end || !Eligible(v, s) {
		return Action{Kind: Stream}
	}
	if now.Before(g.retryAt) {
		return Action{Kind: Stream, RetryAt: g.retryAt}
	}
	g.open, g.start, g.offered = true, next, false
	return Action{Kind: Open, At: next}
}
