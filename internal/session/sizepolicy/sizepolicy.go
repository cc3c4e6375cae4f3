// Package sizepolicy decides a session's terminal size from its viewers'.
//
// A session has one size, and its viewers' terminals may differ. The policy
// says whose size wins: under Latest, that of the writable viewer that last
// typed, resized or arrived (as tmux's window-size latest); under Smallest,
// the smallest columns and the smallest rows of the writable viewers, so
// that every one of them shows the whole screen.
//
// It guarantees: a read-only viewer never counts; a viewer whose size is
// unknown (0x0) or out of range counts only once it has a size; with no
// viewer that counts, the session keeps the size it has. Decide and Need
// are pure functions: no I/O, no clock (the caller stamps each viewer's
// activity), no state of their own.
package sizepolicy

import (
	"fmt"
	"time"

	"termkeep/internal/wire"
)

// Policy is how a session's size follows its viewers. The zero Policy is
// Latest.
type Policy string

const (
	// Latest follows the writable viewer that last typed, resized or
	// arrived.
	Latest Policy = "latest"
	// Smallest fits every writable viewer: the smallest columns and rows.
	Smallest Policy = "smallest"
)

// Parse reads a policy name; "" is Latest.
func Parse(s string) (Policy, error) {
	switch Policy(s) {
	case Latest, Smallest:
		return Policy(s), nil
	case "":
		return Latest, nil
	}
	return "", fmt.Errorf("size policy %q is not latest or smallest", s)
}

// Viewer is what the policy knows of one attached viewer.
type Viewer struct {
	ID       int // unique among the session's viewers, above 0
	Writable bool
	// Cols and Rows are its terminal's size; 0x0 while it is unknown.
	Cols, Rows uint16
	// Active is when it last typed, resized or arrived; zero if never.
	Active time.Time
}

// Size is a terminal size; the zero Size is none.
type Size struct{ Cols, Rows uint16 }

func (s Size) String() string { return fmt.Sprintf("%dx%d", s.Cols, s.Rows) }

// counts reports whether v has a say in the size: it may write, and its
// size is known and one a session can have.
func counts(v Viewer) bool {
	return v.Writable && wire.CheckSize(v.Cols, v.Rows) == nil
}

// Decide returns the size the session should have under p with viewers
// attached, and under Latest the ID of the viewer whose size it is (owner
// 0: none; Smallest has no owner). The zero Size means no viewer has a
// say: the session keeps its size.
//
// Under Latest, of two viewers equally recent the later to arrive (the
// higher ID) wins, so the choice does not depend on the order of viewers.
// Decide does not retain viewers.
func Decide(p Policy, viewers []Viewer) (size Size, owner int) {
	if p == Smallest {
		for _, v := range viewers {
			if !counts(v) {
				continue
			}
			if size.Cols == 0 || v.Cols < size.Cols {
				size.Cols = v.Cols
			}
			if size.Rows == 0 || v.Rows < size.Rows {
				size.Rows = v.Rows
			}
		}
		return size, 0
	}
	var best Viewer
	for _, v := range viewers {
		if !counts(v) {
			continue
		}
		if best.ID == 0 || v.Active.After(best.Active) || (v.Active.Equal(best.Active) && v.ID > best.ID) {
			best = v
		}
	}
	if best.ID == 0 {
		return Size{}, 0
	}
	return Size{best.Cols, best.Rows}, best.ID
}

// Need reports whether the session must be asked to take size want. It
// compares with the size last asked for (asked; zero when none has been
// yet, and then with the size the session has, has), not with the one the
// session has confirmed: in a quick run of resizes back to an earlier
// size, the last one must not be skipped while a confirmation of the one
// before is on its way.
func Need(want, asked, has Size) bool {
	if want.Cols == 0 || want.Rows == 0 {
		return false
	}
	last := asked
	if last.Cols == 0 {
		last = has
	}
	return want != last
}
