// Package flow decides, for one viewer of a session, which output it is
// sent and when: where a new viewer starts (Resume), and, as output comes,
// whether to send it more, wait for it to draw what it has, or skip it to
// the present with a snapshot because it cannot catch up (Progress).
//
// It guarantees, for a viewer that follows what it is told:
//
//   - It is sent every byte from where it starts, in order, with nothing
//     repeated; it misses bytes only through a snapshot (a resync, which
//     shows the screen as it is at the snapshot's offset, and output goes
//     on from exactly there) or a gap it is told of (bytes nobody has).
//   - Nothing but its own writer waits for it: it holds a position, not a
//     buffer, so a slow viewer costs nobody else anything.
//   - A viewer replaying a backlog it asked for is never skipped, nor is a
//     waiter (raw bytes). A live viewer is skipped only once it has been
//     more than its queue behind for JudgeSlowOver (counting from when a
//     write to it began to block), judged every JudgeEvery, and at no
//     judgement keeping a pace that reads what is behind it within
//     CatchUpWithin, unless a write to it blocked that long.
//
// A Progress is a state machine in the manner of etcd raft's
// tracker.Progress: it does no I/O, starts no goroutine and reads no
// clock. The caller passes the time in, does what the returned Action
// says, and reports what it did (Sent, Skipped, Resynced). A Progress is
// used by one goroutine, the viewer's writer.
package flow

import (
	"fmt"
	"time"
)

// JudgeEvery is the moment over which a viewer more than its queue behind
// is judged: if it read at a pace that catches up (CatchUpWithin), it is
// judged again over the next moment.
const JudgeEvery = 250 * time.Millisecond

// CatchUpWithin is the pace a viewer more than its queue behind must keep
// to count as reading rather than slow: at the rate it read since it was
// last judged, what is behind it must take at most this long to read. A
// viewer that reads nearly as fast as a flood comes (a second tab, a
// client on a loaded machine) gets every byte, the ones past the window
// from the log on disk; one that stopped, or reads a tenth as fast as the
// output (a browser drawing a flood), is skipped to the present.
const CatchUpWithin = 2 * time.Second

// JudgeSlowOver is how long a viewer must stay behind without keeping
// pace, or a write to it block, before it is skipped to the present: on a
// busy machine a reader (a client among many in one process, a browser
// tab) can be starved for a few hundred milliseconds, read nothing in
// them, and then read at full speed.
const JudgeSlowOver = time.Second

// State is where a viewer stands in its flow.
type State uint8

const (
	// Replaying: it is sent a backlog it asked for (a resume from an
	// offset) and is not judged until it has reached the end once.
	Replaying State = iota
	// Streaming: it follows the output, at most its queue behind.
	Streaming
	// Behind: it is more than its queue behind and judged every
	// JudgeEvery; slow for JudgeSlowOver, it is resynced.
	Behind
)

func (s State) String() string {
	switch s {
	case Replaying:
		return "replaying"
	case Streaming:
		return "streaming"
	case Behind:
		return "behind"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Kind is what the caller does next.
type Kind uint8

const (
	// Send output from Action.From: from the in-memory window if it holds
	// that offset, else from the log on disk; then call Sent (or Skipped,
	// for a gap the log reports).
	Send Kind = iota
	// AwaitAck: a queue is in flight and not yet drawn; wait for an ack,
	// new output or a second, then observe again.
	AwaitAck
	// CaughtUp: everything is sent. Send the exit if the session has
	// ended, else wait for output.
	CaughtUp
	// Resync: send a snapshot of the present screen, then call Resynced
	// with its offset. Action.Why says why, for the log.
	Resync
	// Gap: tell the viewer that [Action.From, Action.To) is gone, then call
	// Skipped(Action.To).
	Gap
)

func (k Kind) String() string {
	switch k {
	case Send:
		return "send"
	case AwaitAck:
		return "await-ack"
	case CaughtUp:
		return "caught-up"
	case Resync:
		return "resync"
	case Gap:
		return "gap"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Action is what Observe or Gone decided.
type Action struct {
	Kind     Kind
	From, To uint64 // Send: from; Gap: [From, To)
	Why      Why    // Resync
}

func (a Action) String() string {
	switch a.Kind {
	case Send:
		return fmt.Sprintf("send %d", a.From)
	case Gap:
		return fmt.Sprintf("gap %d-%d", a.From, a.To)
	case Resync:
		return "resync " + a.Why.String()
	}
	return a.Kind.String()
}

// Why is what a resync was decided on, for the log: how far behind the
// viewer was, and what it read over how long while behind; or that a
// write to it blocked for JudgeSlowOver (it had stopped reading); or that
// the log no longer holds its bytes.
type Why struct {
	Behind, Read uint64
	Over         time.Duration
	Blocked      bool
	Gone         bool
	First        uint64 // Gone: the log's oldest byte then
}

func (w Why) String() string {
	if w.Gone {
		return fmt.Sprintf("behind=%d gone first=%d", w.Behind, w.First)
	}
	s := fmt.Sprintf("behind=%d read=%d over=%v", w.Behind, w.Read, w.Over)
	if w.Blocked {
		s += " blocked"
	}
	return s
}

// Config is how a viewer is served.
type Config struct {
	// Queue is how far (in bytes) a live viewer may fall behind the output
	// before it is judged, and how much it may have in flight undrawn when
	// it acks.
	Queue uint64
	// Waiter: the viewer reads raw output (wait --output). It is never
	// resynced: bytes it cannot have are a gap.
	Waiter bool
}

// Progress is one viewer's flow: its position and the judgement of its
// pace. Make it with New.
type Progress struct {
	cfg   Config
	next  uint64 // the offset of the next byte to send
	live  bool   // it has reached the end once (or never asked for a backlog)
	state State

	// While Behind: since when, what it had drawn then, and whether the
	// server was taking in a backlog from its holder then.
	behindSince time.Time
	behindDrawn uint64
	behindDrain bool
	// When the last output write began, if it blocked for JudgeSlowOver:
	// the viewer stopped reading then, and that is time spent behind even
	// though the caller could not observe meanwhile.
	blockedAt time.Time

	resyncing Why // the reason of the Resync action last returned
}

// New returns the progress of a viewer whose output starts at from. A live
// viewer is judged from the start; one replaying a backlog (Start.Live
// false) once it has caught up.
func New(from uint64, live bool, cfg Config) Progress {
	p := Progress{cfg: cfg, next: from, live: live, state: Streaming}
	if !live {
		p.state = Replaying
	}
	return p
}

// Next returns the offset of the next byte the viewer is to be sent.
func (p *Progress) Next() uint64 { return p.next }

// State returns where the viewer stood at the last Observe.
func (p *Progress) State() State { return p.state }

// Observation is what the caller sees of the session and the viewer at
// one moment.
type Observation struct {
	// End is the offset after the session's last byte.
	End uint64
	// Acking says the viewer sends acks (a browser), and Acked how far it
	// has acked drawing. An ack beyond what it was sent counts for no more.
	Acking bool
	Acked  uint64
	// Draining reports whether the server is still taking in a backlog
	// from the holder (it was stopped or hung for a while, so nobody could
	// have had these bytes sooner). It is asked only when a judgement
	// begins, as it may read the log's end; nil means no.
	Draining func() bool
}

// keepsPace reports whether a viewer lag bytes behind, which read (drew)
// read bytes in the last d, would at that pace read what is behind it within
// CatchUpWithin.
func keepsPace(lag, read uint64, d time.Duration) bool {
	return read > 0 && float64(lag)*float64(d) <= float64(read)*float64(CatchUpWithin)
}

// Observe judges the viewer at now, one reading of the clock for every
// judgement it makes (on a busy machine the caller can be descheduled
// between two readings for longer than JudgeEvery, and a viewer found
// keeping pace by the first must not be judged slow by the second), and
// returns what to do next.
func (p *Progress) Observe(now time.Time, o Observation) Action {
	draining := func() bool { return o.Draining != nil && o.Draining() }
	// How far behind the viewer is: what it has drawn when it says so
	// (acks), else what it has accepted from the connection.
	drawn := p.next
	if o.Acking {
		drawn = min(o.Acked, p.next)
	}
	// A viewer is resynced when it has stayed more than a queue behind
	// without keeping pace for JudgeSlowOver: a late wake-up of the writer
	// or of the reader on a busy machine is not a slow viewer, and costs
	// nothing to wait out (the bytes are in the window or the log, not in a
	// buffer of its own).
	lagging := p.live && !p.cfg.Waiter && p.next < o.End && o.End-drawn > p.cfg.Queue
	if !lagging {
		p.behindSince = time.Time{}
	} else if p.behindSince.IsZero() {
		p.behindSince, p.behindDrawn, p.behindDrain = now, drawn, draining()
		if !p.blockedAt.IsZero() {
			p.behindSince = p.blockedAt
		}
	}
	read := max(drawn, p.behindDrawn) - p.behindDrawn // drawn since it fell behind
	lagFor := now.Sub(p.behindSince)
	if lagging && lagFor >= JudgeEvery && p.blockedAt.IsZero() &&
		(keepsPace(o.End-drawn, read, lagFor) || p.behindDrain) {
		// Behind, but not slow: it kept reading, at a pace that reads what
		// is behind it soon (the bytes came in a burst, say after a
		// reconnect, or it reads nearly as fast as a flood comes), or the
		// server itself was taking in the holder's backlog meanwhile. Judge
		// it again over the next moment. A viewer that stopped reading is
		// slow whatever the server did.
		p.behindSince, p.behindDrawn, p.behindDrain = now, drawn, draining()
		lagFor = 0
	}
	switch {
	case !p.live && p.next < o.End:
		p.state = Replaying
	case lagging:
		p.state = Behind
	default:
		p.state = Streaming
	}
	if p.next >= o.End {
		p.live = true
	} else if lagging && lagFor >= JudgeSlowOver {
		p.behindSince = time.Time{}
		p.resyncing = Why{Behind: o.End - drawn, Read: read, Over: lagFor, Blocked: !p.blockedAt.IsZero()}
		return Action{Kind: Resync, Why: p.resyncing}
	}
	if o.Acking && p.next-drawn >= p.cfg.Queue && p.next < o.End {
		return Action{Kind: AwaitAck}
	}
	if p.next < o.End {
		return Action{Kind: Send, From: p.next}
	}
	return Action{Kind: CaughtUp}
}

// Sent records that n bytes from Next were written to the viewer, the
// write beginning at began and returning at done. A write that blocked for
// JudgeSlowOver counts as time behind from when it began.
func (p *Progress) Sent(n int, began, done time.Time) {
	p.next += uint64(n)
	p.blockedAt = time.Time{}
	if done.Sub(began) >= JudgeSlowOver {
		p.blockedAt = began
	}
}

// Skipped records that the viewer was told of a gap up to to (bytes never
// logged, damaged, or gone), and continues there.
func (p *Progress) Skipped(to uint64) {
	p.next = max(p.next, to)
}

// Forward returns where a reader at off goes on after bytes it cannot read
// up to to: at least one byte further, and never past end.
func Forward(off, to, end uint64) uint64 {
	return min(max(to, off+1), end)
}

// Gone decides what to do when the log no longer holds the viewer's next
// byte (retention dropped it) and the output ends at end, the log's oldest
// byte being first: a viewer is resynced; a waiter, which reads raw bytes,
// is told of a gap and goes on from the oldest byte.
func (p *Progress) Gone(end, first uint64) Action {
	if !p.cfg.Waiter {
		p.resyncing = Why{Behind: end - p.next, Gone: true, First: first}
		return Action{Kind: Resync, Why: p.resyncing}
	}
	return Action{Kind: Gap, From: p.next, To: Forward(p.next, first, end)}
}

// Resynced records that the snapshot a Resync asked for was sent, valid at
// offset at; output goes on from there. It reports whether the viewer's
// acks are to count the snapshot as drawn: after a resync for slowness the
// viewer acks past it soon, and meanwhile it must not be judged slow again
// at once.
func (p *Progress) Resynced(at uint64) (countDrawn bool) {
	p.next = at
	return !p.resyncing.Gone
}
