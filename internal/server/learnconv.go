package server

import (
	"context"
	"errors"
	"time"

	"termkeep/internal/agents"
	"termkeep/internal/procinfo"
	"termkeep/internal/session"
	"termkeep/internal/store"
)

// An agent that takes no conversation id up front (codex) has its id
// learned while its session runs, from the conversation file one of the
// session's processes holds open (agents.Preset.Conversation), and
// recorded with the restore command that resumes it. A look reads /proc
// (the session's processes and their descriptors): cheap, never free, so
// the server looks a few times after the start, further apart each time
// (the agent opens its file as it starts, or at its first message), and
// after that only when the session's activity changed, at most once per
// lookGap. A codex /new starts another conversation in another file: the
// newest open one wins and replaces the recorded id, which the log says.

// lookBackoff are the waits between the looks after a session starts:
// seven looks in its first 32 seconds.
var lookBackoff = []time.Duration{
	250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second,
	4 * time.Second, 8 * time.Second, 16 * time.Second,
}

// lookGap is the least time between two looks once the backoff is over.
const lookGap = 10 * time.Second

// maxLookWait bounds a wait, whatever the clock does.
const maxLookWait = 16 * time.Second

// lookSchedule decides when to look for a running session's conversation.
// It does no I/O and reads no clock: the caller passes the time in.
type lookSchedule struct {
	start time.Time
	looks int       // looks made so far
	last  time.Time // when the last look was made
	seen  time.Time // the session's activity at the last look
}

func newLookSchedule(start time.Time) *lookSchedule {
	return &lookSchedule{start: start, last: start}
}

// next says whether to look now, given the session's last activity (its
// last output or input), and else how long to wait before asking again.
func (l *lookSchedule) next(now, activity time.Time) (look bool, wait time.Duration) {
	step := lookGap
	if l.looks < len(lookBackoff) {
		step = lookBackoff[l.looks]
	}
	if due := l.last.Add(step); now.Before(due) {
		// Never longer than the step itself: a clock set back does not
		// stop the looks.
		return false, min(due.Sub(now), step)
	}
	if l.looks < len(lookBackoff) || activity.After(l.seen) {
		return true, 0
	}
	return false, lookGap
}

// looked records a look made at now, when the session's activity was
// activity.
func (l *lookSchedule) looked(now, activity time.Time) {
	l.looks++
	l.last = now
	if activity.After(l.seen) {
		l.seen = activity
	}
}

// watchConversation learns and records, while session sess runs in host
// h, the conversation its agent has open; it returns at once for a
// session whose conversation is not learned (no such agent, or a restore
// command of the user's own).
func (s *Server) watchConversation(sess store.Session, h *session.Host) {
	p, err := agents.Lookup(sess.Agent)
	if err != nil || !p.Learns(sess.Command, sess.RestoreCommand, sess.AgentConversation) {
		return
	}
	s.goBackground(func(ctx context.Context) {
		sched := newLookSchedule(time.Now())
		timer := time.NewTimer(lookBackoff[0])
		defer timer.Stop()
		for {
			select {
			case <-h.Ended():
				return
			case <-s.done:
				return
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			now, activity := time.Now(), h.Activity().Last
			look, wait := sched.next(now, activity)
			if look {
				if !s.lookForConversation(ctx, sess.ID, p, h) {
					return
				}
				sched.looked(now, activity)
				_, wait = sched.next(time.Now(), activity)
			}
			timer.Reset(max(wait, lookBackoff[0]))
		}
	})
}

// lookForConversation looks once for the conversation session id's agent
// has open and records it when it is new, within ctx. It reports whether to go on
// looking: not where nothing can be learned (off Linux) or the session is
// no longer termkeep's to pin.
func (s *Server) lookForConversation(ctx context.Context, id string, p agents.Preset, h *session.Host) bool {
	pid := h.Info().Pid
	if pid <= 0 {
		return true
	}
	conv, err := p.Conversation(pid, agents.System)
	switch {
	case errors.Is(err, procinfo.ErrUnsupported):
		return false
	case err != nil:
		s.log.Debug("look for the agent's conversation", "session", id, "err", err)
		return true
	case conv == "":
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	sess, err := s.store.Session(ctx, id)
	if err != nil || sess.AgentConversation == conv {
		return err == nil || !errors.Is(err, store.ErrNotFound)
	}
	restore, ok := p.Learned(sess.Command, sess.RestoreCommand, sess.AgentConversation, conv)
	if !ok {
		return false
	}
	if err := s.store.SetAgentConversation(ctx, id, sess.AgentConversation, conv, restore); err != nil {
		s.log.Warn("record the agent's conversation", "session", id, "conversation", conv, "err", err)
		return !errors.Is(err, store.ErrNotFound)
	}
	if sess.AgentConversation == "" {
		s.log.Info("learned the agent's conversation", "session", id, "agent", p.Name, "conversation", conv)
	} else {
		s.log.Info("the agent moved to a newer conversation; a restore resumes it", "session", id, "agent", p.Name,
			"conversation", conv, "replaced", sess.AgentConversation)
	}
	return true
}
