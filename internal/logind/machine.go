package logind

import (
	"strings"
	"time"
)

// Kind is what an Action asks of the caller.
type Kind uint8

const (
	// TakeLock: ask logind for a delay inhibitor lock, and report the
	// answer with Locked.
	TakeLock Kind = iota + 1
	// ReleaseLock: close the lock's file descriptor.
	ReleaseLock
	// Prepare: ready every running session for the shutdown (their logs
	// synced, screens checkpointed, the coming end recorded as a
	// shutdown's), waiting for them no later than Deadline; then call Done.
	Prepare
	// Cancel: tell every session the shutdown is off.
	Cancel
)

func (k Kind) String() string {
	switch k {
	case TakeLock:
		return "take-lock"
	case ReleaseLock:
		return "release-lock"
	case Prepare:
		return "prepare"
	case Cancel:
		return "cancel"
	}
	return "none"
}

// Action is one thing the caller does, in the order returned.
type Action struct {
	Kind     Kind
	Deadline time.Time // Prepare's
}

// phase is where a Machine is between shutdowns.
type phase uint8

const (
	watching  phase = iota // no shutdown announced
	preparing              // PrepareForShutdown(true) came; Prepare runs
	prepared               // ready; the lock let go, the signals may come
	lost                   // the bus is gone: no signal comes any more
)

var phaseNames = [...]string{"watching", "preparing", "prepared", "lost"}

// Machine decides what the server does with logind: when to take the
// delay inhibitor lock, when to ready the sessions for a shutdown and
// when to let the lock go (so the shutdown goes on). It is a
// single-threaded state machine in the manner of etcd raft's RawNode: it
// does no I/O and reads no clock; each event method is given what
// happened (and the time) and returns the actions to take, in order.
//
// The lock is held whenever logind could announce a shutdown, and let go
// only once the sessions are ready: a PrepareForShutdown(false) (the
// shutdown was cancelled) tells the sessions, whoever readied them, and
// takes it again. A refused lock is not asked
// for again until a shutdown is cancelled; the sessions are still readied
// when one is announced, as far as the time logind gives allows. A lost
// bus announces nothing more, so a lock held then would only delay the
// machine's shutdown: it is let go, once any preparation under way ends.
type Machine struct {
	budget    time.Duration
	phase     phase
	held      bool // the lock's descriptor is open
	taking    bool // TakeLock was returned; Locked has not been called since
	cancelled bool // PrepareForShutdown(false) came while preparing
	wasLost   bool // the bus was lost while preparing
}

// NewMachine returns a Machine that gives the sessions budget to get
// ready for a shutdown: well under logind's InhibitDelayMaxSec (5 s by
// default), after which the shutdown goes on without waiting.
func NewMachine(budget time.Duration) *Machine { return &Machine{budget: budget} }

// Start begins: the lock is asked for.
func (m *Machine) Start() []Action {
	if m.gone() || m.held || m.taking {
		return nil
	}
	m.taking = true
	return []Action{{Kind: TakeLock}}
}

// Locked reports the answer to TakeLock: ok when logind gave the lock.
func (m *Machine) Locked(ok bool) []Action {
	asked := m.taking
	m.taking = false
	if !ok {
		return nil
	}
	if !asked || m.held || m.phase == prepared || m.gone() {
		// Nobody asked for it, or it would only delay the shutdown.
		return []Action{{Kind: ReleaseLock}}
	}
	m.held = true
	return nil
}

// Signal reports PrepareForShutdown(start) at now.
func (m *Machine) Signal(start bool, now time.Time) []Action {
	switch {
	case m.gone():
		return nil
	case start && m.phase == watching:
		m.phase, m.cancelled = preparing, false
		return []Action{{Kind: Prepare, Deadline: now.Add(m.budget)}}
	case start && m.phase == preparing:
		m.cancelled = false // cancelled, then announced again: a shutdown after all
		return nil
	case !start && m.phase == preparing:
		m.cancelled = true // told once the preparation ends (Done)
		return nil
	case !start && (m.phase == prepared || m.phase == watching):
		// Told even with no shutdown announced here: an earlier server
		// may have readied the sessions for the one now cancelled.
		m.phase = watching
		acts := []Action{{Kind: Cancel}}
		if !m.held && !m.taking {
			m.taking = true
			acts = append(acts, Action{Kind: TakeLock})
		}
		return acts
	}
	return nil // a duplicate
}

// Done reports that Prepare's work has ended (all ready, or its deadline
// passed).
func (m *Machine) Done() []Action {
	if m.phase != preparing {
		return nil
	}
	if m.cancelled && !m.wasLost {
		m.phase, m.cancelled = watching, false
		acts := []Action{{Kind: Cancel}}
		if !m.held && !m.taking {
			m.taking = true
			acts = append(acts, Action{Kind: TakeLock})
		}
		return acts
	}
	m.phase = prepared
	if m.wasLost {
		m.phase = lost
	}
	return m.release()
}

// Lost reports that the bus connection is gone.
func (m *Machine) Lost() []Action {
	if m.phase == preparing {
		m.wasLost = true // the lock goes once the sessions are ready
		return nil
	}
	m.phase = lost
	return m.release()
}

// gone reports whether the bus was lost.
func (m *Machine) gone() bool { return m.phase == lost || m.wasLost }

func (m *Machine) release() []Action {
	if !m.held {
		return nil
	}
	m.held = false
	return []Action{{Kind: ReleaseLock}}
}

// Holding reports whether the lock's descriptor is open.
func (m *Machine) Holding() bool { return m.held }

// String is the machine's state in words, for tests and logs:
// "preparing held cancelled".
func (m *Machine) String() string {
	w := []string{phaseNames[m.phase]}
	if m.taking {
		w = append(w, "taking")
	}
	if m.held {
		w = append(w, "held")
	}
	if m.cancelled {
		w = append(w, "cancelled")
	}
	if m.wasLost && m.phase != lost {
		w = append(w, "lost")
	}
	return strings.Join(w, " ")
}
