package flow

import (
	"fmt"

	"termkeep/internal/wire"
)

// Start is where a new viewer begins.
type Start struct {
	// From is the offset its output continues from; with a snapshot, the
	// snapshot's offset replaces it once taken.
	From uint64
	// Resume is what the Welcome says: wire.ResumeBytes, ResumeSnapshot or
	// ResumeLive.
	Resume string
	// Gap: a waiter asked for bytes retention dropped; it is told of the
	// gap up to the log's oldest byte, and goes on from there.
	Gap bool
}

// Snapshot reports whether the viewer starts with a snapshot.
func (s Start) Snapshot() bool { return s.Resume == wire.ResumeSnapshot }

// Live reports whether it is judged from the start: one that asked for a
// backlog (resume from an offset) is judged once it has caught up.
func (s Start) Live() bool { return s.Resume != wire.ResumeBytes }

// BeyondEndError is a resume from an offset the session has not reached.
type BeyondEndError struct{ From, End uint64 }

func (e *BeyondEndError) Error() string {
	return fmt.Sprintf("offset %d is beyond the session's end (%d)", e.From, e.End)
}

// Resume decides where a viewer saying hello starts, when the log holds
// [first, end): hello.From an offset resumes there (below first, a viewer
// gets the screen as it is instead, and a waiter is told of the gap);
// wire.FromSnapshot asks for a snapshot; any other negative From for live
// output only. An offset beyond end is a *BeyondEndError.
func Resume(hello wire.Hello, first, end uint64) (Start, error) {
	waiter := hello.Role == wire.RoleWaiter
	s := Start{From: end, Resume: wire.ResumeLive}
	switch {
	case hello.From == wire.FromSnapshot:
		s.Resume = wire.ResumeSnapshot
	case hello.From >= 0:
		s.From, s.Resume = uint64(hello.From), wire.ResumeBytes
		if s.From < first {
			if waiter {
				s.Gap = true
			} else {
				s.Resume = wire.ResumeSnapshot
			}
		}
	}
	if s.From > end {
		return Start{}, &BeyondEndError{From: s.From, End: end}
	}
	return s, nil
}
