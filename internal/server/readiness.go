package server

import (
	"context"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/readiness"
	"termkeep/internal/session"
	"termkeep/internal/shellinit"
	"termkeep/internal/store"
)

// lookTimeout bounds how long a session's view waits for its screen model
// to catch up before it answers without the screen.
const lookTimeout = 300 * time.Millisecond

// activity is what the API shows as a running session's activity
// (package readiness decides); nil when it is not running here. The
// screen is looked at only when the answer depends on it.
func (s *Server) activity(ctx context.Context, sess store.Session, h *session.Host) *api.Activity {
	if h == nil || sess.State != store.StateRunning {
		return nil
	}
	now := time.Now()
	after := s.quietAfter()
	if after <= 0 {
		after = session.DefaultQuietAfter // the quiet rule is off; readiness still needs a threshold
	}
	in := readiness.Input{
		Shell:       h.Shell(),
		Integration: sess.ShellIntegration && shellinit.Kind(sess.Command) != "",
		Command:     sess.Command,
		Created:     sess.CreatedAt,
		LastOutput:  h.Quiet(now, after).LastOutput,
		Now:         now,
		QuietAfter:  after,
	}
	if readiness.NeedsScreen(in) {
		lctx, cancel := context.WithTimeout(ctx, lookTimeout)
		alt, text, row, err := h.Look(lctx)
		cancel()
		if err == nil {
			line := readiness.LastLine(text, row)
			in.Screen = &readiness.Screen{Alt: alt, Line: line, Prompt: session.LooksLikePrompt(line)}
		}
	}
	a := readiness.Decide(in)
	out := &api.Activity{State: string(a.State), Command: a.Command, LastLine: a.LastLine}
	if !a.Since.IsZero() {
		since := a.Since.UTC().Truncate(time.Millisecond)
		out.Since = &since
	}
	return out
}
