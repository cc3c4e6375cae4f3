package session

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"termkeep/internal/screen"
)

// DefaultQuietAfter is how long a session prints nothing before it counts
// as quiet.
const DefaultQuietAfter = 2 * time.Second

// The quiet rule. A running session is quiet once it has printed nothing
// for the threshold (DefaultQuietAfter, the server's --quiet-after): it is
// then most likely waiting, for its user (a shell prompt, an agent's input
// box, a "continue? (y/n)") or for something slow that prints nothing. The
// rule looks at output only: input that echoes nothing (a password) does
// not end a quiet spell, its echo would.
//
// It costs nothing on the output path beyond the time stamp appendOutput
// already stores for the server's idle policy (activity.go): quietness is
// computed when asked, from that stamp, never with a timer per chunk.
// Whether the screen looks like a prompt (PromptLine) is a separate, dearer
// question, asked once per quiet spell by whoever reports it.

// Quiet is a session's output quietness at one moment.
type Quiet struct {
	// LastOutput is when the host last received output, or when it was
	// made if it has received none since.
	LastOutput time.Time
	// Since is LastOutput once nothing has been printed for the threshold;
	// zero while output flows, and once the session has ended.
	Since time.Time
}

// Quiet reports whether the session has printed nothing for after (at now,
// by the host's clock: time.Now with its monotonic reading). after <= 0
// turns the rule off: Since stays zero.
func (h *Host) Quiet(now time.Time, after time.Duration) Quiet {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := Quiet{LastOutput: h.usage.output}
	if after > 0 && h.exit == nil && now.Sub(q.LastOutput) >= after {
		q.Since = q.LastOutput
	}
	return q
}

// PromptLine returns the text of the cursor's line once the screen model
// has caught up with the output, and whether it looks like a prompt
// (LooksLikePrompt); nothing when ctx ends first.
func (h *Host) PromptLine(ctx context.Context) (line string, prompt bool) {
	h.current(ctx, func(scr *screen.Screen) {
		_, y := scr.CursorPosition()
		lines := strings.Split(scr.Text(0), "\n")
		if y >= 0 && y < len(lines) {
			line = strings.TrimRight(lines[y], " ")
		}
	})
	return line, LooksLikePrompt(line)
}

// promptEnds are the characters prompts end in: shells ($ # % >), REPLs
// (> », ❯ of starship and pure, → ), questions (? :).
const promptEnds = "$#%>?:»❯→"

// questions are answers a program offers at a yes/no question.
var questions = []string{"(y/n)", "[y/n]", "(yes/no)", "[yes/no]", "(y/n/a)", "[ynaq]"}

// LooksLikePrompt reports whether a screen line (trailing blanks trimmed)
// reads as a prompt: it is not empty and ends in a prompt character, or it
// offers a yes/no answer such as "(y/n)" or "[Y/n]" anywhere.
func LooksLikePrompt(line string) bool {
	line = strings.TrimRight(line, " \t")
	if line == "" {
		return false
	}
	lower := strings.ToLower(line)
	for _, q := range questions {
		if strings.Contains(lower, q) {
			return true
		}
	}
	r, _ := utf8.DecodeLastRuneInString(line)
	return strings.ContainsRune(promptEnds, r)
}
