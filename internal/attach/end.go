package attach

import (
	"fmt"

	"termkeep/internal/wire"
)

// How attach ends: its terminal gone, or the session ended.

// terminalGone is a write to attach's terminal that failed: the terminal
// hung up (a write that would block waits for room instead), so
// attach ends rather than reconnect.
type terminalGone struct{ err error }

func (e terminalGone) Error() string { return "the terminal is gone: " + e.err.Error() }
func (e terminalGone) Unwrap() error { return e.err }

// sessionEnded says how a session ended, and the status attach exits
// with: the session's, or 1 when it is not known.
func sessionEnded(ref string, e *wire.Exit) (string, int) {
	switch {
	case e.ExitCode == nil:
		return fmt.Sprintf("session %s was %s: %s", ref, e.State, e.Reason), 1
	case e.State == "closed":
		return fmt.Sprintf("session %s was closed (status %d)", ref, *e.ExitCode), *e.ExitCode
	default:
		return fmt.Sprintf("session %s exited with status %d", ref, *e.ExitCode), *e.ExitCode
	}
}
