// Package readiness decides what a running session is doing, in the words
// an agent acts on. Where the kernel's word is known (the holder reads
// what the pty's foreground process group is blocked in: package
// fgstate), the state is what the kernel vouches for; the text on the
// screen is only a hint beside it. Where it is not (off Linux, a holder
// older than protocol 11), the shell integration's marks, the screen and
// quiet time decide, as a guess.
//
// The states, and what each promises:
//
//   - AtPrompt: the shell's marks say its prompt is drawn and, when the
//     kernel's word is known, the terminal's foreground is the shell
//     itself and nothing typed waits unread: a line typed now is read by
//     the shell as a command. A shell without marks is at its prompt when
//     the kernel says the shell itself, with no job in the foreground,
//     waits on the terminal with nothing unread.
//   - ReadingTerminal: kernel-vouched: a program of the foreground is
//     blocked reading the terminal (`rm -i`, `read`, python's `input()`,
//     `cat`, `less`): what is typed next is its answer.
//   - WaitingOnEvents: kernel-vouched but weaker: every process of the
//     foreground is blocked, one in poll, select or epoll holding the
//     terminal open (vim, a REPL, node): most likely waiting for a key.
//   - Running: a command, the shell's prompt hooks or the session's
//     program is at work, or sleeps in anything but the terminal
//     (`sleep`, a build quiet on a pipe or a network).
//   - Starting: a shell with termkeep's integration has not marked its
//     first prompt yet, or one without marks has not come to wait on its
//     terminal yet (the kernel says), for up to StartWait.
//   - Waiting: only without the kernel's word: a program is quiet with a
//     full screen or a prompt-like line under the cursor; most likely it
//     waits for input, but quietness cannot tell `sleep 30` from a
//     question.
//
// Decide is a pure function of what the server knows, the clock passed
// in; the server gathers the inputs and looks at the screen only when
// NeedsScreen says the answer depends on it.
package readiness

import (
	"path"
	"strings"
	"time"

	"termkeep/internal/shellmark"
)

// State is a running session's activity.
type State string

const (
	// AtPrompt: the shell has drawn its prompt; nothing it started runs
	// and, as far as the kernel says, nothing typed waits unread.
	AtPrompt State = "at_prompt"
	// Running: a command (or the session's program) is working.
	Running State = "running"
	// ReadingTerminal: a foreground program is blocked reading the
	// terminal (the kernel says so).
	ReadingTerminal State = "reading_terminal"
	// WaitingOnEvents: the foreground is blocked in poll, select or
	// epoll, holding the terminal open (the kernel says so).
	WaitingOnEvents State = "waiting_on_events"
	// Waiting: without the kernel's word, a program is quiet with a
	// full screen or a prompt-like line under the cursor: most likely
	// it waits for input.
	Waiting State = "waiting"
	// Starting: a shell with termkeep's integration that has not marked
	// its first prompt yet (rc files still loading).
	Starting State = "starting"
)

// Hints: what the screen suggests, beside a state the kernel vouches for.
const (
	HintPrompt     = "looks like a prompt"
	HintFullScreen = "a full-screen program"
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
	// Kernel is what the kernel says of the pty's foreground; nil when
	// unknown (off Linux, an older holder, no answer in time).
	Kernel *Kernel
}

// Kernel is what the kernel says of the pty's foreground process group.
type Kernel struct {
	// State is Running, ReadingTerminal or WaitingOnEvents.
	State State
	// Shell: the foreground group is the session's program's own (a
	// shell with no job in the foreground).
	Shell bool
	// Unread is the bytes typed that the terminal's reader has not
	// taken; -1 unknown.
	Unread int
	// Pid and Program are the process that decided State: the reader,
	// the one waiting, else one of the group.
	Pid     int
	Program string
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
	// Kernel: the kernel's word decided State.
	Kernel bool
	// Pid and Program name the foreground process the kernel saw, and
	// Unread the bytes typed it has not read (when the kernel's word is
	// known and they are not 0).
	Pid     int
	Program string
	Unread  int
	// Hint is what the screen suggests (HintPrompt, HintFullScreen)
	// beside a state the kernel vouches for; never the state itself.
	Hint string
}

func quiet(in Input) bool {
	return in.QuietAfter > 0 && !in.LastOutput.After(in.Now) && in.Now.Sub(in.LastOutput) >= in.QuietAfter
}

func starting(in Input) bool {
	return in.Shell.State != shellmark.AtPrompt && in.Shell.State != shellmark.Running &&
		in.Shell.State != shellmark.Returning && in.Integration && in.Shell.Marks == 0 && in.Now.Sub(in.Created) < StartWait
}

// NeedsScreen reports whether Decide's answer depends on the screen: the
// session is quiet, or the kernel says its foreground waits, and it is
// not known to be at its prompt or starting.
func NeedsScreen(in Input) bool {
	if in.Shell.State == shellmark.AtPrompt || starting(in) {
		return false
	}
	waits := in.Kernel != nil && (in.Kernel.State == ReadingTerminal || in.Kernel.State == WaitingOnEvents)
	return waits || quiet(in)
}

// Decide returns the session's activity.
func Decide(in Input) Activity {
	if in.Kernel != nil {
		return decideKernel(in, *in.Kernel)
	}
	if in.Shell.State == shellmark.AtPrompt {
		return Activity{State: AtPrompt, Since: in.Shell.Since}
	}
	if starting(in) {
		return Activity{State: Starting, Since: in.Created}
	}
	a := marked(in)
	if s := in.Screen; s != nil && (s.Alt || s.Prompt) && quiet(in) {
		a.State, a.Since, a.LastLine = Waiting, in.LastOutput, s.Line
	}
	return a
}

// marked is a session at work as its marks (else its command) say.
func marked(in Input) Activity {
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
	return a
}

// decideKernel decides with the kernel's word k: the marks say where the
// shell is, the kernel what the terminal's reader does; the screen only
// hints.
func decideKernel(in Input, k Kernel) Activity {
	clear := k.Shell && k.Unread == 0
	if in.Shell.State == shellmark.AtPrompt && clear {
		return Activity{State: AtPrompt, Since: in.Shell.Since, Kernel: true}
	}
	unmarked := in.Shell.Marks == 0 && in.Shell.State != shellmark.Running && in.Shell.State != shellmark.Returning && IsShell(in.Command)
	if starting(in) || unmarked && k.Shell && k.State == Running && in.Now.Sub(in.Created) < StartWait {
		// A shell without marks that has not come to read its terminal
		// yet is starting too: its rc files run.
		return Activity{State: Starting, Since: in.Created}
	}
	a := marked(in)
	waits := k.State == ReadingTerminal || k.State == WaitingOnEvents
	if unmarked && clear && waits {
		// No marks to say where the shell is: the shell itself waiting
		// on its terminal, with no job in the foreground, is its prompt.
		a = Activity{State: AtPrompt, Since: in.LastOutput}
	} else if k.State == ReadingTerminal || k.State == WaitingOnEvents || k.State == Running {
		a.State = k.State
		if waits {
			a.Since = in.LastOutput
		}
	}
	a.Kernel, a.Pid, a.Program = true, k.Pid, k.Program
	a.Unread = max(k.Unread, 0)
	if s := in.Screen; s != nil {
		if waits || quiet(in) {
			a.LastLine = s.Line
		}
		switch {
		case s.Alt:
			a.Hint = HintFullScreen
		case s.Prompt && quiet(in):
			a.Hint = HintPrompt
		}
	}
	return a
}

// shells are the programs whose own reading of the terminal, with no job
// in the foreground, is their prompt.
var shells = map[string]bool{"sh": true, "dash": true, "ash": true, "bash": true, "zsh": true, "fish": true,
	"ksh": true, "mksh": true, "oksh": true, "yash": true, "tcsh": true, "csh": true}

// IsShell reports whether command runs a shell.
func IsShell(command []string) bool {
	return len(command) > 0 && shells[strings.TrimPrefix(path.Base(command[0]), "-")]
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
