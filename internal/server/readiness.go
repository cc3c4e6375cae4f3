package server

import (
	"context"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/readiness"
	"termkeep/internal/session"
	"termkeep/internal/shellinit"
	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// lookTimeout bounds how long a session's view waits for its screen model
// to catch up, and for its holder to say what its foreground does,
// before it answers without them.
const lookTimeout = 300 * time.Millisecond

// activity is what the API shows as a running session's activity
// (package readiness decides); nil when it is not running here. The
// holder is asked what the kernel says of the foreground (an older one
// cannot say: the answer is then the marks' and the screen's); the
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
	in.Kernel = kernel(ctx, h)
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
	out := &api.Activity{State: string(a.State), Command: a.Command, LastLine: a.LastLine,
		Kernel: a.Kernel, Pid: a.Pid, Program: a.Program, Unread: a.Unread, Hint: a.Hint}
	if !a.Since.IsZero() {
		since := a.Since.UTC().Truncate(time.Millisecond)
		out.Since = &since
	}
	return out
}

// kernel is what the session's holder says the kernel says of the pty's
// foreground; nil when it cannot say (an older holder, not Linux) or
// does not answer within lookTimeout.
func kernel(ctx context.Context, h *session.Host) *readiness.Kernel {
	kctx, cancel := context.WithTimeout(ctx, lookTimeout)
	defer cancel()
	f, err := h.Foreground(kctx)
	if err != nil {
		return nil
	}
	k := &readiness.Kernel{Shell: f.Shell, Unread: -1, Pid: int(f.Pid), Program: f.Comm}
	if f.UnreadKnown {
		k.Unread = int(f.Unread)
	}
	switch f.Kind {
	case wire.FgRunning:
		k.State = readiness.Running
	case wire.FgReadingTerminal:
		k.State = readiness.ReadingTerminal
	case wire.FgWaitingOnEvents:
		k.State = readiness.WaitingOnEvents
	default:
		return nil
	}
	return k
}
