// Package readiness decides what a running session is doing, in the words
// an agent acts on: at its shell's prompt, running a command (which one,
// since when), waiting for input (a full-screen or interactive program
// that has gone quiet), or starting (a shell that has not drawn its first
// prompt yet). Quietness alone cannot tell `sleep 30` from a program
// waiting for an answer, nor a shell slow to start from one at its
// prompt; the shell integration's marks and the screen can.
//
// Decide is a pure function of what the server knows, the clock passed
// in; the server gathers the inputs and looks at the screen only when
// NeedsScreen says the answer depends on it.
package readiness

import (
	"strings"
	"time"

	"termkeep/internal/shellmark"
)

// State is a running session's activity.
type State string

const (
	// AtPrompt: the shell has drawn its prompt; nothing it started runs.
	AtPrompt State = "at_prompt"
	// Running: a command (or the session's program) is working.
	Running State = "running"
	// Waiting: a program is quiet with a full screen or a prompt-like
	// line under the cursor: most likely it waits for input.
	Waiting State = "waiting"
	// Starting: a shell with termkeep's integration that has not marked
	// its first prompt yet (rc files still loading).
	Starting State = "starting"
)

// StartWait is how long a shell with integration is taken to be starting
// before its silence is judged by its screen instead.
const StartWait = 10 * time.Second

// Screen is what the server saw of the session's screen.
type Screen struct {
	Alt    bool   // the alternate screen: a full-screen program
	Line   string // the last line that matters (LastLine)
	Prompt bool   // Line reads as a prompt or a question
}

// Input is what Decide weighs.
type Input struct {
	Shell       shellmark.Status
	Integration bool     // the session's shell is expected to mark its prompts
	Command     []string // the session's command
	Created     time.Time
	LastOutput  time.Time
	Now         time.Time
	// QuietAfter is how long nothing printed counts as quiet; <= 0 never.
	QuietAfter time.Duration
	// Screen is nil when it was not looked at.
	Screen *Screen
}

// Activity is the decision.
type Activity struct {
	State State
	// Since is when the state began, as far as known (zero: unknown).
	Since time.Time
	// Command is the command running or waiting, when known.
	Command string
	// LastLine is a waiting program's line (its question, its prompt).
	LastLine string
}

func quiet(in Input) bool {
	return in.QuietAfter > 0 && !in.LastOutput.After(in.Now) && in.Now.Sub(in.LastOutput) >= in.QuietAfter
}

func starting(in Input) bool {
	return in.Shell.State != shellmark.AtPrompt && in.Shell.State != shellmark.Running &&
		in.Shell.State != shellmark.Returning && in.Integration && in.Shell.Marks == 0 && in.Now.Sub(in.Created) < StartWait
}

// NeedsScreen reports whether Decide's answer depends on the screen: the
// session is quiet and not known to be at its prompt or starting.
func NeedsScreen(in Input) bool {
	return in.Shell.State != shellmark.AtPrompt && !starting(in) && quiet(in)
}

// Decide returns the session's activity.
func Decide(in Input) Activity {
	if in.Shell.State == shellmark.AtPrompt {
		return Activity{State: AtPrompt, Since: in.Shell.Since}
	}
	if starting(in) {
		return Activity{State: Starting, Since: in.Created}
	}
	a := Activity{State: Running, Since: in.Created, Command: strings.Join(in.Command, " ")}
	if in.Shell.State == shellmark.Returning {
		// Between a command's end and the next prompt: the shell's
		// prompt hooks run. Not its prompt: typing now reaches whatever
		// reads first.
		a.Since, a.Command = in.Shell.Since, "(the shell's prompt hooks)"
	}
	if in.Shell.State == shellmark.Running {
		a.Since, a.Command = in.Shell.Since, ""
		if c := in.Shell.Running; c != nil {
			a.Command = c.Line
			if !c.Start.IsZero() {
				a.Since = c.Start
			}
		}
	}
	if s := in.Screen; s != nil && (s.Alt || s.Prompt) && quiet(in) {
		a.State, a.Since, a.LastLine = Waiting, in.LastOutput, s.Line
	}
	return a
}

// LastLine is the line of a rendered screen (lines split by "\n") that
// says what a quiet program waits for: the cursor's row when it has text,
// else the last row that has. Trailing blanks are trimmed.
func LastLine(screen string, cursorRow int) string {
	rows := strings.Split(screen, "\n")
	if cursorRow >= 0 && cursorRow < len(rows) {
		if l := strings.TrimRight(rows[cursorRow], " "); l != "" {
			return l
		}
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if l := strings.TrimRight(rows[i], " "); l != "" {
			return l
		}
	}
	return ""
}
