// Package liveness decides when the server pings a viewer and when it drops
// one that stopped answering.
//
// It guarantees that a viewer is dropped only for its own silence: it is
// judged silent only on pings the server sent while its own loop ran on
// time, and given the pong timeout to answer each. A server that was
// stopped (SIGSTOP, a debugger, a machine starved for CPU) has read
// nothing meanwhile, and the monotonic clock kept counting: the answers
// its viewers sent are still waiting in its sockets. So when the loop
// wakes far later than it was due, it counts every viewer's silence
// afresh from that moment and pings at once.
//
// The loop wakes more often than it pings (Step), so that a stall is seen
// whenever it ends: a loop that woke only to ping could sleep through most
// of a stall that ended just before its next ping was due, and find it on
// time.
//
// A Pinger is a state machine in the manner of etcd raft's
// tracker.Progress: it does no I/O, starts no goroutine and reads no
// clock. The caller passes the time in and does what Wake returns. A
// Pinger is used by one goroutine, the viewer's pinger.
package liveness

import (
	"fmt"
	"time"
)

// Action is what the caller does after a wake.
type Action uint8

const (
	// Wait: nothing to do until the next wake.
	Wait Action = iota
	// Ping: send the viewer a ping.
	Ping
	// Drop: the viewer has been silent past the limit; end its connection.
	Drop
)

func (a Action) String() string {
	switch a {
	case Wait:
		return "wait"
	case Ping:
		return "ping"
	case Drop:
		return "drop"
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// Config is how often a viewer is pinged and how long it has to answer.
type Config struct {
	// Interval: a ping is sent every Interval.
	Interval time.Duration
	// Timeout: a viewer silent for Interval+Timeout is dropped. It bounds
	// how long an answer may take to come back and be read, so it also
	// bounds the stall that goes unnoticed (Step plus LateBy).
	Timeout time.Duration
}

// Verdict is what Wake decided.
type Verdict struct {
	Action Action
	// Restarted: the loop woke Late after it was due, too late to judge
	// by, and the viewer's silence is counted from now.
	Restarted bool
	Late      time.Duration
	// Silent is how long the viewer has been silent, as judged.
	Silent time.Duration
}

// Pinger is one viewer's liveness.
type Pinger struct {
	cfg      Config
	step     time.Duration
	lateBy   time.Duration
	due      time.Time // when the loop is next due to wake
	since    time.Time // silence counts from the later of this and the last frame heard
	nextPing time.Time
}

// minDuration keeps a hostile or zero configuration from making a loop
// that never sleeps.
const minDuration = time.Millisecond

// New returns a Pinger for a viewer that arrived at now: its silence
// counts from now, and its first ping is due an interval later.
func New(cfg Config, now time.Time) *Pinger {
	cfg.Interval = max(cfg.Interval, minDuration)
	cfg.Timeout = max(cfg.Timeout, minDuration)
	step := max(min(cfg.Interval, cfg.Timeout)/2, minDuration)
	return &Pinger{
		cfg: cfg, step: step, lateBy: max(cfg.Timeout/4, minDuration),
		due: now.Add(step), since: now, nextPing: now.Add(cfg.Interval),
	}
}

// Step is how long the caller sleeps between wakes: half the shorter of
// the interval and the timeout.
func (p *Pinger) Step() time.Duration { return p.step }

// LateBy is how much later than due a wake must be for the loop to count
// as stalled: a quarter of the timeout. A stall shorter than Step plus
// LateBy (three quarters of the timeout at most) may go unnoticed, and the
// timeout leaves room for it.
func (p *Pinger) LateBy() time.Duration { return p.lateBy }

// Wake is called each time the caller's loop wakes, at now, with the time
// the viewer was last heard from (any frame counts; the zero time: never).
// The next wake is due Step after now.
func (p *Pinger) Wake(now, heard time.Time) Verdict {
	late := now.Sub(p.due)
	p.due = now.Add(p.step)
	if p.since.After(now) {
		p.since = now // the time passed in went backwards
	}
	if late > p.lateBy {
		// The loop itself was stopped: whatever the viewer sent meanwhile
		// is unread. Count afresh and ask again now.
		p.since = now
		p.nextPing = now.Add(p.cfg.Interval)
		return Verdict{Action: Ping, Restarted: true, Late: late}
	}
	from := p.since
	if heard.After(from) {
		from = heard
	}
	silent := max(now.Sub(from), 0)
	if silent > p.cfg.Interval+p.cfg.Timeout {
		return Verdict{Action: Drop, Silent: silent}
	}
	if !now.Before(p.nextPing) {
		p.nextPing = now.Add(p.cfg.Interval)
		return Verdict{Action: Ping, Silent: silent}
	}
	if p.nextPing.Sub(now) > p.cfg.Interval {
		p.nextPing = now.Add(p.cfg.Interval) // the time passed in went backwards
	}
	return Verdict{Action: Wait, Silent: silent}
}
