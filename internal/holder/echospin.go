package holder

import "time"

// spinBackoff is how long the holder does not look for echoes after a look
// that found none.
const spinBackoff = time.Second

// spinPolicy decides whether awaitEcho looks for a keystroke's echo. A look
// pays only when the echo comes while it lasts, which takes a free core for
// the kernel's pty worker: on a machine whose other cores are busy the echo
// waited for the look to end, and each look cost its whole length (echo p50
// through attach 360 µs against 150 µs without looks, docs/performance-ab.md).
// So a look that finds nothing stops the looks for spinBackoff. A key that
// has no echo (a program that draws later, a password prompt) costs one
// look a second. No I/O, no lock, the clock passed in.
type spinPolicy struct {
	offUntil time.Time // no looks before this
}

// look reports whether to look for the echo of a keystroke written at now.
func (p *spinPolicy) look(now time.Time) bool {
	// A pause longer than spinBackoff is a clock set back: over.
	return !now.Before(p.offUntil) || p.offUntil.Sub(now) > spinBackoff
}

// looked records a look's result at now: whether it found the echo.
func (p *spinPolicy) looked(now time.Time, found bool) {
	if !found {
		p.offUntil = now.Add(spinBackoff)
	}
}
