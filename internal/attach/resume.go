package attach

import "termkeep/internal/wire"

// resume decides where each connection of an attach starts, so that its
// terminal gets every byte of the session once: from the offset after the
// last byte written to it, by attach or by a lane on its behalf. Only a
// skip the terminal cannot follow (the session left its alternate screen
// under --alt-screen, attach was stopped and continued, a server that
// cannot say where a lane ended) draws the screen anew from a snapshot.
// It does no I/O; the attach loop tells it what happened.
type resume struct {
	// off is the next offset wanted: everything below it is on the
	// terminal; wire.FromSnapshot before the first snapshot, or when
	// the screen must be drawn anew.
	off int64
	// token names the current connection's lanes; claim is an earlier
	// connection's, lost while a lane may have written past off, whose
	// end the next connection asks for (wire/laneclaim.go).
	token, claim uint64
	// drawing counts the snapshots a connection that asked for one has
	// yet to draw (its screen, then its history): they skip nothing.
	drawing int
}

func newResume() resume { return resume{off: wire.FromSnapshot} }

// connecting starts a connection with token: it returns what its hello
// asks for.
func (r *resume) connecting(token uint64) (from int64, tok, claim uint64) {
	r.drawing = 0
	if r.off < 0 {
		r.claim = 0 // a snapshot draws it all
		r.drawing = 2
	}
	r.token = token
	return r.off, r.token, r.claim
}

// welcomed takes the server's version: a claim it cannot answer makes
// the connection worthless (again: close it and connect for a snapshot).
func (r *resume) welcomed(version int) (again bool) {
	if r.claim != 0 && !wire.LaneClaims(version) {
		r.off, r.claim = wire.FromSnapshot, 0
		return true
	}
	return false
}

// wrote records bytes at off on the terminal (output, or a lane's).
func (r *resume) wrote(off uint64, n int) { r.off = int64(off) + int64(n) }

// snapshot records a snapshot valid at off: output continues from there.
// It returns how many bytes of output the terminal skipped: a snapshot
// that replaces an offset the terminal had reached.
func (r *resume) snapshot(off uint64) (skipped uint64) {
	if r.drawing > 0 {
		r.drawing--
	} else if r.off >= 0 && int64(off) > r.off {
		skipped = off - uint64(r.off)
	}
	r.off = int64(off)
	return skipped
}

// gap records bytes below to that the log no longer holds.
func (r *resume) gap(to uint64) { r.off = int64(to) }

// laneEnded records a lane-end: the first on a connection answers its
// claim.
func (r *resume) laneEnded() { r.claim = 0 }

// lost records a connection that ended without the session's end; idle
// says no lane could have been writing (attach's gate was idle). A lane
// that may have run past off is claimed by the next connection; a claim
// still unanswered stays (that connection had no lane: the server opens
// none while it claims).
func (r *resume) lost(idle bool) {
	if !idle && r.off >= 0 && r.claim == 0 {
		r.claim = r.token
	}
}

// redraw asks the next connection for a snapshot.
func (r *resume) redraw() { r.off, r.claim = wire.FromSnapshot, 0 }
