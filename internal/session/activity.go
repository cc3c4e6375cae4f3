package session

import "time"

// activity is what the server's session policies (idle timeout, orphan
// grace) need to know of a session: when it was last used and since when it
// has had no viewer. The host stamps it as output, input and viewers come
// and go; it is guarded by Host.mu.
type activity struct {
	output, input time.Time // last output from the holder, last input sent to it
	// alone is when the session last came to have no viewer: when the last
	// one left, or when the host was made if none has come since. Zero
	// while a viewer is attached.
	alone time.Time
}

// newActivity is the activity of a host made at now: as if it had been
// used, and left alone, at that moment. A session found running when the
// server starts therefore counts from the server's start, a new one from
// its creation.
func newActivity(now time.Time) activity {
	return activity{output: now, input: now, alone: now}
}

// viewersChanged records that the host now has n viewers.
func (a *activity) viewersChanged(n int, now time.Time) {
	switch {
	case n > 0:
		a.alone = time.Time{}
	case a.alone.IsZero():
		a.alone = now
	}
}

// Activity is a point-in-time view of how a session has been used, as its
// host has seen it (the host's clock is the wall clock with its monotonic
// reading: compare with time.Now).
type Activity struct {
	// Last is the later of the last output and the last input, or when the
	// host was made if it has seen neither since.
	Last time.Time
	// Alone is since when the session has had no interactive viewer (a
	// CLI attach, a browser tab, a wire viewer; waiters and one-shot reads
	// such as capture do not count). Zero while one is attached.
	Alone time.Time
}

// Activity returns how the session has been used.
func (h *Host) Activity() Activity {
	h.mu.Lock()
	defer h.mu.Unlock()
	last := h.usage.output
	if h.usage.input.After(last) {
		last = h.usage.input
	}
	return Activity{Last: last, Alone: h.usage.alone}
}

// SetCloseReason sets why the session is being closed, for a close the
// server decides on its own (a policy rather than `termkeep kill`): a
// session that then ends as closed records reason as its end's reason.
// Call it before Kill.
func (h *Host) SetCloseReason(reason string) {
	h.mu.Lock()
	h.closeReason = reason
	h.mu.Unlock()
}

// stampInput records that input (or a signal) is being sent to the session.
func (h *Host) stampInput() {
	h.mu.Lock()
	h.usage.input = h.now()
	h.mu.Unlock()
}
