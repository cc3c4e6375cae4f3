package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"termkeep/internal/session"
	"termkeep/internal/store"
)

// policyTick is how often the policies look at the sessions: a session ends
// within about this long of its deadline (plus the kill grace).
const policyTick = time.Second

// policies are the optional rules by which the server ends a session on its
// own. Both are off (0) by default: only an explicit close ends a session.
type policies struct {
	// orphanGrace ends a session this long after its last viewer left (or
	// after it was made, or found at start, if none has come since).
	orphanGrace time.Duration
	// idleTimeout ends a session that has had no output and no input for
	// this long.
	idleTimeout time.Duration
}

func (p policies) off() bool { return p.orphanGrace <= 0 && p.idleTimeout <= 0 }

// due decides whether a running session whose use is a must end at now, and
// says why in words a user reads in `termkeep ls`. It does no I/O.
func (p policies) due(now time.Time, a session.Activity) (reason string, ok bool) {
	if p.orphanGrace > 0 && !a.Alone.IsZero() && now.Sub(a.Alone) >= p.orphanGrace {
		return fmt.Sprintf("no viewer for %s (TERMKEEP_ORPHAN_GRACE)", p.orphanGrace), true
	}
	if p.idleTimeout > 0 && now.Sub(a.Last) >= p.idleTimeout {
		return fmt.Sprintf("no output or input for %s (TERMKEEP_IDLE_TIMEOUT)", p.idleTimeout), true
	}
	return "", false
}

// ParsePolicyDuration reads a policy's duration as TERMKEEP_ORPHAN_GRACE and
// TERMKEEP_IDLE_TIMEOUT give it: a Go duration ("10m", "1h30m", "30s") or a
// plain number of seconds ("600"). "" and 0 mean never.
func ParsePolicyDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if !(n >= 0 && n <= float64(1<<63-1)/float64(time.Second)) { // NaN too
			return 0, fmt.Errorf("%q is out of range: give a duration such as 10m, 30s or 600 (seconds), or 0 for never", s)
		}
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: give one such as 10m, 30s or 600 (seconds), or 0 for never", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative: give a duration such as 10m, or 0 for never", s)
	}
	return d, nil
}

// startPolicies runs the policies until the returned stop is called; stop
// waits for the loop and for any session it is ending. With both policies
// off it starts nothing.
func (s *Server) startPolicies() (stop func()) {
	p := policies{orphanGrace: s.cfg.OrphanGrace, idleTimeout: s.cfg.IdleTimeout}
	if p.off() {
		return func() {}
	}
	s.log.Info("session policies on", "orphan_grace", p.orphanGrace, "idle_timeout", p.idleTimeout)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.runPolicies(ctx, p, &wg)
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}

// runPolicies looks at every live session once a tick and ends those the
// policies say are due, each in a goroutine of its own (counted in wg) so a
// slow kill never delays the others.
func (s *Server) runPolicies(ctx context.Context, p policies, wg *sync.WaitGroup) {
	tick := time.NewTicker(policyTick)
	defer tick.Stop()
	var mu sync.Mutex
	ending := make(map[string]bool) // sessions being ended; guarded by mu
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, h := range s.allHosts() {
			if ctx.Err() != nil {
				return
			}
			mu.Lock()
			busy := ending[h.ID]
			mu.Unlock()
			if busy || h.Exit() != nil {
				continue
			}
			// The host's clock is time.Now's (with its monotonic reading),
			// so the policies are judged by it too.
			if _, ok := p.due(time.Now(), h.Activity()); !ok {
				continue
			}
			// Only a session the registry has as running is ended (not one
			// being paused, say); judge it again after the lookup, in case
			// a viewer came in the meantime.
			sess, err := s.store.Session(ctx, h.ID)
			if err != nil {
				if !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
					s.log.Warn("session policies: look up session", "session", h.ID, "err", err)
				}
				continue
			}
			if sess.State != store.StateRunning {
				continue
			}
			reason, ok := p.due(time.Now(), h.Activity())
			if !ok {
				continue
			}
			mu.Lock()
			ending[h.ID] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.endByPolicy(h, reason)
				mu.Lock()
				delete(ending, h.ID)
				mu.Unlock()
			}()
		}
	}
}

// endByPolicy ends a session the way `termkeep kill` does (SIGHUP, then
// SIGKILL after the kill grace) and records it as closed for reason. Its
// log and directory stay: `termkeep restore` can start it again.
func (s *Server) endByPolicy(h *session.Host, reason string) {
	s.log.Info("ending session by policy", "session", h.ID, "reason", reason)
	h.SetCloseReason(reason)
	if err := s.kill(h); err != nil {
		// Not ended yet: the next tick tries again.
		s.log.Warn("end session by policy", "session", h.ID, "err", err)
	}
}
