package server

import (
	"cmp"
	"context"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"time"

	"termkeep/internal/store"
)

// Ended sessions stay listed, with their logs, until someone removes them;
// without a bound, a server that runs builds for years fills its disk and
// its registry. So the server keeps at most Config.KeepEnded exited and
// closed sessions, whose directories hold at most Config.KeepEndedBytes in
// all, and removes the oldest ended first (by end time) past either bound,
// each as `termkeep rm` would, with a session.pruned event that says why.
//
// Interrupted and paused sessions are never pruned, nor counted: they wait
// for a restore, and what the machine or a workspace pause ended is not the
// user's to lose. Running sessions are bounded by --max-sessions instead.

const (
	// DefaultKeepEnded is how many exited and closed sessions are kept
	// when Config.KeepEnded is 0: more than a session list is of use for,
	// and a registry of that many rows stays small and fast.
	DefaultKeepEnded = 500
	// DefaultKeepEndedBytes bounds their directories' total size when
	// Config.KeepEndedBytes is 0: room for 80 logs at their largest
	// (twice the 64 MiB --log-retention), and far less than a disk.
	DefaultKeepEndedBytes = 10 << 30
)

// pruneCandidate is what the pruning decision knows of a session.
type pruneCandidate struct {
	ID      string
	State   store.State
	EndedAt time.Time // the zero time (unknown) is the oldest
	Bytes   int64     // the size of its directory; below 0 counts as 0
}

// pruneLimits are the bounds on kept ended sessions; a bound of 0 or less
// is none.
type pruneLimits struct {
	Count int
	Bytes int64
}

// Why a session was pruned (the session.pruned event's reason).
const (
	pruneCount = "count" // more ended sessions than Count
	pruneBytes = "bytes" // their directories over Bytes
)

// pruneChoice is one session to remove and why.
type pruneChoice struct {
	ID, Reason string
}

// prunable reports whether a session in st may be pruned, and counts.
func prunable(st store.State) bool { return st == store.StateExited || st == store.StateClosed }

// choosePrune decides which sessions of all to remove so that the exited
// and closed ones are within lim: the oldest ended first (ties by id, so
// the choice is the same whatever order all is in), each with the bound it
// was over. It reads nothing and changes nothing.
func choosePrune(all []pruneCandidate, lim pruneLimits) []pruneChoice {
	var ended []pruneCandidate
	for _, c := range all {
		if prunable(c.State) {
			c.Bytes = max(c.Bytes, 0)
			ended = append(ended, c)
		}
	}
	slices.SortFunc(ended, func(a, b pruneCandidate) int {
		return cmp.Or(a.EndedAt.Compare(b.EndedAt), cmp.Compare(a.ID, b.ID))
	})
	// left[i] is the size of ended[i:], saturated: what is kept if the
	// ones before i go.
	left := make([]int64, len(ended)+1)
	for i := len(ended) - 1; i >= 0; i-- {
		left[i] = addSat(left[i+1], ended[i].Bytes)
	}
	var out []pruneChoice
	for i, c := range ended {
		reason := ""
		switch {
		case lim.Count > 0 && len(ended)-i > lim.Count:
			reason = pruneCount
		case lim.Bytes > 0 && left[i] > lim.Bytes:
			reason = pruneBytes
		default:
			return out
		}
		out = append(out, pruneChoice{ID: c.ID, Reason: reason})
	}
	return out
}

// addSat is a+b for sizes that are not negative, saturating.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// keepLimits are the server's bounds, defaults filled in and negative
// values (none) kept as none.
func (s *Server) keepLimits() pruneLimits {
	lim := pruneLimits{Count: s.cfg.KeepEnded, Bytes: s.cfg.KeepEndedBytes}
	if lim.Count == 0 {
		lim.Count = DefaultKeepEnded
	}
	if lim.Bytes == 0 {
		lim.Bytes = DefaultKeepEndedBytes
	}
	return lim
}

// pruner runs prune passes one at a time, in its own goroutine, so that a
// session's end never waits for one. A kick during a pass makes one more
// pass after it, which sees that session's end.
type pruner struct {
	kick chan struct{} // buffered 1: kicks coalesce
}

// kickPrune asks for a prune pass; it never blocks.
func (s *Server) kickPrune() {
	select {
	case s.prune.kick <- struct{}{}:
	default:
	}
}

// runPruner makes prune passes when kicked, starting with one, until ctx
// ends, the server stops or stop is called; stop returns once no pass
// runs.
func (s *Server) runPruner(ctx context.Context) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	lim := s.keepLimits()
	s.kickPrune()
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-quit:
				return
			case <-s.done:
				return
			case <-s.prune.kick:
				s.prunePass(ctx, quit, lim)
			}
		}
	}()
	return func() { close(quit); <-done }
}

// prunePass removes what choosePrune says, from the registry as it is now.
func (s *Server) prunePass(ctx context.Context, quit <-chan struct{}, lim pruneLimits) {
	all, err := s.store.Sessions(ctx)
	if err != nil {
		s.log.Warn("prune ended sessions: list sessions", "err", err)
		return
	}
	cands := make([]pruneCandidate, 0, len(all))
	for _, sess := range all {
		c := pruneCandidate{ID: sess.ID, State: sess.State}
		if !prunable(sess.State) {
			cands = append(cands, c)
			continue
		}
		if sess.EndedAt != nil {
			c.EndedAt = *sess.EndedAt
		}
		c.Bytes = dirSize(s.cfg.StateDir.Session(sess.ID))
		cands = append(cands, c)
	}
	for _, c := range choosePrune(cands, lim) {
		select {
		case <-quit:
			return
		case <-s.done:
			return
		default:
		}
		if ctx.Err() != nil {
			return
		}
		s.pruneOne(ctx, c, lim)
	}
}

// pruneOne removes session c.ID unless it changed since it was chosen: a
// restore, say, which cannot begin while this runs (restoreMu).
func (s *Server) pruneOne(ctx context.Context, c pruneChoice, lim pruneLimits) {
	s.restoreMu.Lock()
	defer s.restoreMu.Unlock()
	sess, err := s.store.Session(ctx, c.ID)
	if err != nil || !prunable(sess.State) {
		return
	}
	h := s.host(c.ID)
	if h != nil && h.Exit() == nil {
		return
	}
	detail := map[string]any{"name": sess.Name, "state": string(sess.State), "reason": c.Reason,
		"keep_ended": lim.Count, "keep_ended_bytes": lim.Bytes}
	if sess.EndedAt != nil {
		detail["ended_at"] = sess.EndedAt
	}
	if _, err := s.discard(ctx, sess, h, store.EventSessionPruned, detail); err != nil {
		s.log.Warn("prune an ended session", "session", sess.ID, "err", err)
		return
	}
	s.log.Info("ended session pruned", "session", sess.ID, "name", sess.Name, "reason", c.Reason)
}

// dirSize is the total size of the regular files under dir (0 when it is
// gone).
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n = addSat(n, info.Size())
			}
		}
		return nil
	})
	return n
}
