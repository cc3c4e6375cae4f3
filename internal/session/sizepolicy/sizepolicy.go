// Package sizepolicy decides a session's terminal size from its viewers'.
//
// A session has one size, and its viewers' terminals may differ; each
// viewer draws at the session's size (clipped, scaled or letterboxed), so
// which viewer sets it must be explicit. The policy says whose size wins,
// as tmux's window-size does:
//
//   - Latest: the size of the writable viewer that last took it, by typing
//     or by an explicit fit (a fit frame, a hello with fit, the outer
//     terminal's resize under `termkeep attach`). A mere report of a
//     window's size (a phone that rotates or opens its keyboard) takes
//     nothing, and neither does arriving.
//   - Smallest, Largest: the smallest (largest) columns and rows of the
//     writable viewers' reported sizes.
//   - Fixed: the size set by `new --size`, the API or `termkeep resize`;
//     viewers never change it.
//
// It guarantees: a read-only viewer, or one attached with ignore-size,
// never counts; a size that is unknown (0x0) or out of range never counts;
// with no viewer that counts, the session keeps the size it has. Decide,
// Need and Viewer.Apply are pure: no I/O, no clock (the caller passes the
// time), no state of their own.
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
	// Latest follows the writable viewer that last typed or fit.
	Latest Policy = "latest"
	// Smallest fits every writable viewer: the smallest columns and rows.
	Smallest Policy = "smallest"
	// Largest fills the largest writable viewer: the largest columns and
	// rows; the others clip, scale or pan.
	Largest Policy = "largest"
	// Fixed keeps the size set by new --size, the API or termkeep resize.
	Fixed Policy = "fixed"
)

// Parse reads a policy name; "" is Latest.
func Parse(s string) (Policy, error) {
	switch Policy(s) {
	case Latest, Smallest, Largest, Fixed:
		return Policy(s), nil
	case "":
		return Latest, nil
	}
	return "", fmt.Errorf("size policy %q is not latest, smallest, largest or fixed", s)
}

// Event is what a viewer did that may bear on the size.
type Event int

const (
	// Report: the viewer says its window's size (a resize frame, a hello
	// without fit). It takes the size only for a Legacy viewer.
	Report Event = iota
	// Fit: the viewer asks for the session to take its size (the fit
	// frame, a hello with fit, attach's outer terminal resized).
	Fit
	// Type: the viewer typed; it takes the size at the size it has.
	Type
)

// Viewer is what the policy knows of one attached viewer.
type Viewer struct {
	ID       int // unique among the session's viewers, above 0
	Writable bool
	// IgnoreSize: attached to watch without ever bearing on the size
	// (attach --ignore-size), even under Smallest or Largest.
	IgnoreSize bool
	// Legacy viewers (protocol version 4 and older, a page that did not
	// ask for version 6) take the size by their reports too, as they did.
	Legacy bool
	// Cols and Rows are its terminal's size as last reported; 0x0 while it
	// is unknown.
	Cols, Rows uint16
	// Active is when it last took the size; zero if never. Taken is the
	// size it had then: under Latest the session keeps it until the viewer
	// takes the size again, whatever it reports meanwhile.
	Active time.Time
	Taken  Size
}

// Apply records ev (with the viewer's size for Report and Fit) at now,
// and reports whether the viewer took the size by it.
func (v *Viewer) Apply(ev Event, cols, rows uint16, now time.Time) bool {
	if ev == Report || ev == Fit {
		v.Cols, v.Rows = cols, rows
	}
	if ev == Report && !v.Legacy {
		return false
	}
	if !v.counts() {
		return false
	}
	v.Active, v.Taken = now, Size{v.Cols, v.Rows}
	return true
}

// Size is a terminal size; the zero Size is none.
type Size struct{ Cols, Rows uint16 }

func (s Size) String() string { return fmt.Sprintf("%dx%d", s.Cols, s.Rows) }

// valid reports whether s is a size a session can have.
func (s Size) valid() bool { return wire.CheckSize(s.Cols, s.Rows) == nil }

// counts reports whether v has a say in the size: it may write, did not
// ask to be ignored, and its size is known and one a session can have.
func (v Viewer) counts() bool {
	return v.Writable && !v.IgnoreSize && (Size{v.Cols, v.Rows}).valid()
}

// Decide returns the size the session should have under p with viewers
// attached, and under Latest the ID of the viewer whose size it is (owner
// 0: none; the other policies have no owner). fixed is the size Fixed
// keeps (zero: none set, the session keeps the size it has). The zero
// Size means no viewer has a say: the session keeps its size.
//
// Under Latest, of two viewers that took the size equally recently the
// later to arrive (the higher ID) wins, so the choice does not depend on
// the order of viewers. Decide does not retain viewers.
func Decide(p Policy, fixed Size, viewers []Viewer) (size Size, owner int) {
	switch p {
	case Fixed:
		if !fixed.valid() {
			return Size{}, 0
		}
		return fixed, 0
	case Smallest, Largest:
		better := func(a, b uint16) bool { return b == 0 || (p == Smallest && a < b) || (p == Largest && a > b) }
		for _, v := range viewers {
			if !v.counts() {
				continue
			}
			if better(v.Cols, size.Cols) {
				size.Cols = v.Cols
			}
			if better(v.Rows, size.Rows) {
				size.Rows = v.Rows
			}
		}
		return size, 0
	}
	var best Viewer
	for _, v := range viewers {
		if !v.Writable || v.IgnoreSize || v.Active.IsZero() || !v.Taken.valid() {
			continue
		}
		if best.ID == 0 || v.Active.After(best.Active) || (v.Active.Equal(best.Active) && v.ID > best.ID) {
			best = v
		}
	}
	if best.ID == 0 {
		return Size{}, 0
	}
	return best.Taken, best.ID
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
