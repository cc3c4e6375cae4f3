// Package holderwatch decides when the server judges a session's holder
// unresponsive, and when ending a session on purpose goes past asking its
// holder to a SIGKILL.
//
// A holder answers every ping the server sends it, after the frames sent
// before the ping. One that stops answering (stopped with SIGSTOP, wedged,
// starved) holds up whatever is written to it; the server shows it as
// unresponsive, fails writes to it after a deadline, and a kill does not
// wait on it: it kills the holder instead.
//
// Watch and Kill are state machines in the manner of etcd raft's
// tracker.Progress: they do no I/O, start no goroutine and read no clock.
// The caller passes the time in and does what they return. Each is used
// by one goroutine.
package holderwatch

import (
	"fmt"
	"time"

	"termkeep/internal/session/liveness"
)

// Config is how often a holder is pinged and how long it has to answer.
type Config struct {
	// Interval: a ping is sent every Interval.
	Interval time.Duration
	// Timeout: a holder silent for Interval+Timeout is unresponsive.
	Timeout time.Duration
}

// Verdict is what Watch.Wake decided.
type Verdict struct {
	// Ping: send the holder a ping now.
	Ping bool
	// Unresponsive is the holder's state after this wake; Changed says it
	// changed on this wake.
	Unresponsive, Changed bool
	// Since is when the holder was judged unresponsive (zero while it is
	// not).
	Since time.Time
}

// Watch is one holder connection's liveness. A holder is judged only on
// pings the server sent while its own loop ran on time (liveness.Pinger):
// a server that was stopped has not read its holders' answers either.
type Watch struct {
	cfg          Config
	judge        *liveness.Pinger
	unresponsive bool
	since        time.Time // when it was judged unresponsive
	nextPing     time.Time // while unresponsive: pings go on, so an answer can end it
}

// New returns a Watch for a holder connected at now.
func New(cfg Config, now time.Time) *Watch {
	j := liveness.New(liveness.Config{Interval: cfg.Interval, Timeout: cfg.Timeout}, now)
	cfg.Interval = max(cfg.Interval, time.Millisecond)
	return &Watch{cfg: cfg, judge: j}
}

// Step is how long the caller sleeps between wakes.
func (w *Watch) Step() time.Duration { return w.judge.Step() }

// Unresponsive reports the state the last wake left.
func (w *Watch) Unresponsive() bool { return w.unresponsive }

// Wake is called each time the caller's loop wakes, at now, with the time
// the holder was last heard from (any frame counts; the zero time: never).
func (w *Watch) Wake(now, heard time.Time) Verdict {
	v := w.judge.Wake(now, heard)
	was := w.unresponsive
	ping := v.Action == liveness.Ping
	switch {
	case v.Action == liveness.Drop:
		if !w.unresponsive {
			w.unresponsive, w.since = true, now
			w.nextPing = now
		}
		if !now.Before(w.nextPing) || w.nextPing.Sub(now) > w.cfg.Interval {
			ping = true
			w.nextPing = now.Add(w.cfg.Interval)
		}
	case w.unresponsive && heard.After(w.since):
		// It answered: whatever held it up is over. Only a frame heard
		// after the judgement clears it, not the fresh count a stalled
		// server starts (Restarted), which knows nothing new of it.
		w.unresponsive, w.since = false, time.Time{}
	}
	return Verdict{Ping: ping, Unresponsive: w.unresponsive, Changed: was != w.unresponsive, Since: w.since}
}

// Action is what ending a session needs next.
type Action uint8

const (
	// Wait until the time Step.Until, or the session's end, whichever
	// comes first, then ask Next again.
	Wait Action = iota
	// SIGKILL the holder's process group and the session's processes,
	// then Killed.
	SIGKILL
	// GiveUp: the session has not ended within KillWait of the SIGKILL.
	GiveUp
	// Done: the session has ended.
	Done
)

func (a Action) String() string {
	switch a {
	case Wait:
		return "wait"
	case SIGKILL:
		return "sigkill"
	case GiveUp:
		return "give-up"
	case Done:
		return "done"
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// Asked is how the holder was asked to close its session.
type Asked uint8

const (
	// NotAsked: neither a close frame nor the close signal reached it.
	NotAsked Asked = iota
	// ByFrame: a close frame was written to its connection.
	ByFrame
	// BySignal: its process was sent the close signal.
	BySignal
)

// Why says why a kill escalated to SIGKILL.
type Why uint8

const (
	NoReason     Why = iota
	Unreachable      // the holder could not be asked at all
	NotAnswering     // the holder does not answer pings
	OverGrace        // asked, it has not ended within grace plus Margin
)

func (w Why) String() string {
	switch w {
	case Unreachable:
		return "could not be asked to close the session"
	case NotAnswering:
		return "did not answer"
	case OverGrace:
		return "did not end after it was asked to close the session"
	}
	return ""
}

// Margin is how long after the grace period a holder that was asked to
// close has to end: it sends its processes SIGKILL at the grace, waits for
// them, records the end and exits.
const Margin = 10 * time.Second

// KillWait is how long after a SIGKILL the session has to end before the
// kill gives up.
const KillWait = 10 * time.Second

// Step is what Kill.Next decided.
type Step struct {
	Action Action
	Until  time.Time // for Wait
	Why    Why       // for SIGKILL
}

// Kill is one kill of a session: its holder asked to close (SIGHUP to the
// processes, SIGKILL after grace), then, when the holder does not answer
// or does not end, SIGKILL of the holder itself.
type Kill struct {
	grace    time.Duration
	asked    Asked
	askedAt  time.Time
	killedAt time.Time // zero until the SIGKILL
	why      Why
}

// NewKill starts a kill whose holder was asked (or not) at now, with the
// grace its processes have between SIGHUP and SIGKILL.
func NewKill(asked Asked, now time.Time, grace time.Duration) *Kill {
	return &Kill{grace: max(grace, 0), asked: asked, askedAt: now}
}

// Killed records that the SIGKILL was sent at now.
func (k *Kill) Killed(now time.Time) { k.killedAt = now }

// Escalated reports whether the SIGKILL was sent, and why.
func (k *Kill) Escalated() (bool, Why) { return !k.killedAt.IsZero(), k.why }

// Next decides, at now, what comes next: ended says the session has
// ended, unresponsive that its holder is judged unresponsive (Watch).
func (k *Kill) Next(now time.Time, ended, unresponsive bool) Step {
	if ended {
		return Step{Action: Done}
	}
	if !k.killedAt.IsZero() {
		if now.Sub(k.killedAt) >= KillWait {
			return Step{Action: GiveUp}
		}
		return Step{Action: Wait, Until: k.killedAt.Add(KillWait)}
	}
	deadline := k.askedAt.Add(k.grace + Margin)
	switch {
	case k.asked == NotAsked:
		k.why = Unreachable
	case unresponsive:
		// A close frame waits unread in its socket; a stopped process does
		// not act on the close signal either.
		k.why = NotAnswering
	case !now.Before(deadline):
		k.why = OverGrace
	default:
		return Step{Action: Wait, Until: deadline}
	}
	return Step{Action: SIGKILL, Why: k.why}
}
