package server

import (
	"context"
	"sync"
	"time"

	"termkeep/internal/session"
	"termkeep/internal/store"
)

// quietTick is how often the server looks for sessions that became quiet:
// a session.quiet event comes at most this long after the threshold.
const quietTick = 500 * time.Millisecond

// quietAfter is the server's quiet threshold: Config.QuietAfter, its
// default when unset, nothing when negative (the rule is off).
func (s *Server) quietAfter() time.Duration {
	switch d := s.cfg.QuietAfter; {
	case d == 0:
		return session.DefaultQuietAfter
	case d < 0:
		return 0
	default:
		return d
	}
}

// quietSince is what the API shows as a session's quiet_since: when it
// last printed, once it has printed nothing for the threshold; nil while
// output flows, before it has printed anything (a blank screen says
// nothing of waiting), when it is not running, and with the rule off.
func (s *Server) quietSince(sess store.Session, h *session.Host) *time.Time {
	if h == nil || sess.State != store.StateRunning || h.Info().End == 0 {
		return nil
	}
	q := h.Quiet(time.Now(), s.quietAfter())
	if q.Since.IsZero() {
		return nil
	}
	t := q.Since.UTC().Truncate(time.Millisecond)
	return &t
}

// startQuietWatch emits session.quiet each time a running session becomes
// quiet after printing, until the returned stop is called. One ticker for
// the whole server: the output path only stores a time stamp
// (session/quiet.go). It is called before the server answers, so the hosts
// it finds are the sessions a starting server picked up, and none created
// through the API.
func (s *Server) startQuietWatch() (stop func()) {
	after := s.quietAfter()
	if after <= 0 {
		return func() {}
	}
	// A session found idle was not seen printing, and a restart of the
	// server is not a burst of events: the hosts there now count their
	// last output so far as reported.
	known := make(map[*session.Host]*quietState)
	now := time.Now()
	for _, h := range s.allHosts() {
		known[h] = &quietState{reported: h.Quiet(now, after).LastOutput}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.watchQuiet(ctx, after, known)
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}

// quietState is what the watcher remembers of one host.
type quietState struct {
	// reported is the last-output time of the latest quiet spell that was
	// reported (for the hosts found at the start, their last output then).
	reported time.Time
}

// watchQuiet looks at every host each quietTick; known holds the hosts
// found at the start.
func (s *Server) watchQuiet(ctx context.Context, after time.Duration, known map[*session.Host]*quietState) {
	tick := time.NewTicker(quietTick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		live := make(map[*session.Host]bool)
		for _, h := range s.allHosts() {
			live[h] = true
			q := h.Quiet(now, after)
			st := known[h]
			if st == nil {
				st = &quietState{}
				known[h] = st
			}
			if q.Since.IsZero() || q.LastOutput.Equal(st.reported) || h.Info().End == 0 {
				continue
			}
			st.reported = q.LastOutput
			detail := map[string]any{
				"since":  q.Since.UTC().Format(time.RFC3339Nano),
				"offset": h.Info().End,
			}
			// The session is quiet: its model has caught up, or nearly.
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if line, ok := h.PromptLine(pctx); ok {
				detail["prompt"] = line
			}
			cancel()
			s.events.emit(store.EventSessionQuiet, h.ID, detail)
		}
		for h := range known {
			if !live[h] {
				delete(known, h)
			}
		}
	}
}
