package shellmark

import "time"

// State is what the shell is doing, as its marks tell.
type State string

const (
	// Unknown: no mark seen (no shell integration, or none in what was
	// read), or the marks left it unclear.
	Unknown State = "unknown"
	// AtPrompt: the shell has drawn its prompt (A) or is reading a command
	// line (B); nothing it started is running.
	AtPrompt State = "prompt"
	// Running: a command started (C) and has not ended (D).
	Running State = "running"
	// Returning: a command ended (D) and the shell has not drawn its
	// prompt (A) yet: the user's prompt hooks (PROMPT_COMMAND, precmd,
	// a version manager's, a git prompt's) run, and what is typed now
	// waits for whatever reads the terminal first: a program a hook
	// starts, not the shell's command line.
	Returning State = "returning"
)

// Command is one command as its marks bound it.
type Command struct {
	// Line is the command line, when the shell marked where it was typed
	// (B before C); "" otherwise.
	Line string
	// Start is when it started (its C mark arrived); zero when unknown.
	Start time.Time
	// Output is the offset of its first byte of output (just after C);
	// HasOutput says whether its C was seen at all.
	Output    uint64
	HasOutput bool
	// Seq numbers the commands the tracker has seen start (C), from 1.
	Seq uint64
}

// Ended is a command that ended (D).
type Ended struct {
	Command
	// End is the offset of its D mark: its output is [Output, End).
	End uint64
	// Status is its exit status, when the mark carried one.
	Status *int
	// At is when its D mark arrived.
	At time.Time
}

// Tracker follows one session's shell from its marks. It is a plain
// value: not safe for concurrent use, no I/O, no clock (each mark carries
// the time its bytes arrived). Feed it every byte of the session's output
// in order with Write; after a gap in the stream call Reset.
//
// Marks are taken as a terminal takes them: a program that prints OSC 133
// itself (cat of a file holding them, a nested shell with its own
// integration) moves the tracker as its shell would. The tracker only
// refuses what cannot be: a D with no C before it ends no command (the
// status is kept, with no output range), and a C while a command runs is a
// new command (a nested shell's) that replaces the one the tracker knew.
type Tracker struct {
	scan    Scanner
	state   State
	since   time.Time // when state was entered
	current Command   // while Running
	last    Ended     // the last command that ended
	hasLast bool
	seq     uint64
	marks   uint64 // marks seen, of any kind
}

// NewTracker returns a tracker in the Unknown state.
func NewTracker() *Tracker {
	t := &Tracker{state: Unknown}
	t.scan.Emit = t.mark
	return t
}

// Write feeds p, the output at offset off that arrived at now.
func (t *Tracker) Write(off uint64, now time.Time, p []byte) {
	t.scan.Write(off, now, p)
}

// Reset forgets a sequence or command line in progress, for a gap in the
// stream. What the tracker knows of the shell stays: a gap does not
// change what the shell is doing.
func (t *Tracker) Reset() { t.scan.Reset() }

func (t *Tracker) mark(m Mark) {
	t.marks++
	switch m.Kind {
	case Prompt, Input:
		if t.state != AtPrompt {
			t.state, t.since = AtPrompt, m.Time
		}
		t.current = Command{}
	case Exec:
		t.seq++
		t.current = Command{Line: m.Label, Start: m.Time, Output: m.End, HasOutput: true, Seq: t.seq}
		t.state, t.since = Running, m.Time
	case Done:
		e := Ended{Status: m.Status, End: m.At, At: m.Time}
		if t.state == Running {
			e.Command = t.current
		}
		t.last, t.hasLast = e, true
		t.current = Command{}
		// The shell is back, but its prompt is not until A.
		t.state, t.since = Returning, m.Time
	}
}

// Status is a point-in-time view of the tracker.
type Status struct {
	State State
	// Since is when the shell entered State (zero when Unknown).
	Since time.Time
	// Running is the command running, when State is Running.
	Running *Command
	// Last is the last command that ended, when one has.
	Last *Ended
	// Marks counts the marks seen, of any kind: none means the session's
	// output has shown no shell integration (yet).
	Marks uint64
}

// Status returns what the tracker knows now. The pointers are copies.
func (t *Tracker) Status() Status {
	s := Status{State: t.state, Since: t.since, Marks: t.marks}
	if t.state == Running {
		c := t.current
		s.Running = &c
	}
	if t.hasLast {
		l := t.last
		s.Last = &l
	}
	return s
}
