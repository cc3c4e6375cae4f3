package remote

import "time"

// Redial paces the attempts of one reconnect. Attempts start at least
// the pace apart, a pace that doubles from first after each failure up
// to most. An attempt that failed only after a while (an ssh that waited
// on a link carrying nothing until its ConnectTimeout) has waited its
// turn already: the next starts at once. So while a link is silent one
// attempt is always waiting on it, and it goes on the moment the link
// returns; never more than one, and a host that refuses at once is not
// hammered.
//
// It does no I/O and reads no clock: the caller passes the times in.
type Redial struct {
	pace, most time.Duration
}

// minPace is the least pace: a zero or negative first is taken as it.
const minPace = time.Millisecond

// NewRedial returns the pacing of a reconnect whose first two attempts
// start at least first apart, and no two later ones more than most.
func NewRedial(first, most time.Duration) *Redial {
	first = max(first, minPace)
	return &Redial{pace: first, most: max(most, first)}
}

// Failed records an attempt that began at began and failed at now, and
// returns how long to wait before the next: what is left of the pace
// since began (0 once it has passed; all of it for a now before began).
func (r *Redial) Failed(began, now time.Time) time.Duration {
	wait := min(max(r.pace-now.Sub(began), 0), r.pace)
	if r.pace > r.most/2 {
		r.pace = r.most
	} else {
		r.pace *= 2
	}
	return wait
}
