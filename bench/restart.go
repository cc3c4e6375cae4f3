package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"termkeep/internal/api"
)

// Server restart: N sessions, each with some output behind it, are left
// running while the server is stopped with SIGTERM (holders and children
// keep running, by design) and a new server is started in the same state
// directory. The figure is the time from starting the new server until
// every session is live again: the server answers, lists every session as
// running, and renders each session's screen exactly as the old server did
// before the restart.

// restartGoal is the project's goal for a restart with 100 sessions.
const restartGoal = time.Second

// restartParallel is how many screen requests are in flight at once after
// a restart: viewers that all come back together.
const restartParallel = 16

// restartScrollback is how many lines of history above the screen are
// compared before and after, besides the screen itself.
const restartScrollback = 100

// restartSample is one restart.
type restartSample struct {
	stop       time.Duration // SIGTERM until the old server exited
	health     time.Duration // the new server's start until it answered
	listed     time.Duration // … until it listed every session as running
	live       time.Duration // … until every session's screen was right
	mismatches int           // sessions whose screen never came back right
	firstWrong int           // sessions whose first answered screen was wrong (answered later right)
	holdersOut int           // holders that did not survive the old server's exit
}

type restartReport struct {
	sessions int
	mib      int
	size     int64 // bytes of the file each session printed
	logBytes int64 // the sessions' output logs on disk after printing
	produce  time.Duration
	samples  []restartSample
	errs     []string
	err      error // set when the section could not run at all
}

func runRestart(ctx context.Context, e *env, cfg config) *restartReport {
	rep := &restartReport{sessions: cfg.restartSessions, mib: cfg.restartMiB}
	path, size, err := e.workload(cfg.restartMiB)
	if err != nil {
		rep.err = err
		return rep
	}
	rep.size = size
	srv, err := startServer(ctx, e.bin)
	if err != nil {
		rep.err = err
		return rep
	}
	defer srv.close()

	// Each session prints the file, then a line of its own so that no two
	// screens are alike (a session shown another's screen is caught).
	started := time.Now()
	logf("restart: %d sessions each printing %d MiB", rep.sessions, rep.mib)
	ids := make([]string, rep.sessions)
	holders := make([]int, rep.sessions)
	err = forEach(ctx, rep.sessions, 8, func(i int) error {
		script := fmt.Sprintf("cat %s; printf 'session %%s %d done\\n' %s; exec sleep 3600", shellQuote(path), i, e.m.token)
		sess, hp, err := srv.create(ctx, fmt.Sprintf("r%d", i), []string{"sh", "-c", script})
		ids[i], holders[i] = sess.ID, hp
		return err
	})
	if err != nil {
		rep.err = err
		return rep
	}
	wants := make([]string, rep.sessions)
	for i := range wants {
		wants[i] = fmt.Sprintf("session %s %d done", e.m.token, i)
	}
	before := make([]string, rep.sessions)
	deadline := time.Now().Add(5*time.Minute + time.Duration(int64(rep.sessions)*size/2e6)*time.Second)
	err = forEach(ctx, rep.sessions, 4, func(i int) error {
		for {
			text, err := srv.c.Screen(ctx, ids[i], false, restartScrollback)
			if err == nil && containsLine(text, wants[i]) {
				before[i] = text
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("session %d never finished printing (last answer: %v)", i, err)
			}
			if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
				return err
			}
		}
	})
	if err != nil {
		rep.err = err
		return rep
	}
	rep.produce = time.Since(started)
	rep.logBytes = sessionLogBytes(srv.dir.SessionsDir())
	logf("restart: output printed in %v (%.0f MiB of logs on disk)", rep.produce.Round(100*time.Millisecond), float64(rep.logBytes)/(1<<20))
	// Checkpoints and the log's fsync follow the burst; let them pass, so
	// the restart is of a server at rest.
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		rep.err = err
		return rep
	}

	for round := 1; round <= cfg.restartRounds; round++ {
		s, err := restartOnce(ctx, srv, ids, holders, before)
		if ctx.Err() != nil {
			rep.err = ctx.Err()
			return rep
		}
		if err != nil {
			rep.errs = append(rep.errs, err.Error())
			logf("restart %d/%d FAILED: %v", round, cfg.restartRounds, err)
			if srv.cmd == nil || !srvRunning(srv) {
				rep.err = fmt.Errorf("no server left to restart: %w", err)
				return rep
			}
			continue
		}
		rep.samples = append(rep.samples, s)
		logf("restart %d/%d: stop %v; answered %v, all listed %v, all %d screens right %v (%d mismatches, %d first answers wrong)",
			round, cfg.restartRounds, s.stop.Round(time.Millisecond), s.health.Round(time.Millisecond), s.listed.Round(time.Millisecond),
			rep.sessions, s.live.Round(time.Millisecond), s.mismatches, s.firstWrong)
		if err := sleepCtx(ctx, time.Second); err != nil {
			rep.err = err
			return rep
		}
	}
	return rep
}

func srvRunning(s *tkServer) bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// restartOnce stops the server with SIGTERM, starts a new one in the same
// state directory and times it until every session is live again.
func restartOnce(ctx context.Context, srv *tkServer, ids []string, holders []int, before []string) (restartSample, error) {
	var s restartSample
	var err error
	if s.stop, err = srv.stop(syscall.SIGTERM, 30*time.Second); err != nil {
		return s, err
	}
	for _, pid := range holders {
		if !alive(pid) {
			s.holdersOut++
		}
	}
	t0 := time.Now()
	if err := srv.spawn(); err != nil {
		return s, err
	}
	if err := srv.waitHealthy(ctx, 30*time.Second); err != nil {
		return s, err
	}
	s.health = time.Since(t0)
	for {
		list, err := srv.c.List(ctx)
		if err == nil && allRunning(list, ids) {
			break
		}
		if time.Since(t0) > 30*time.Second {
			return s, fmt.Errorf("not every session listed as running 30 s after the restart (%v)", err)
		}
		if err := sleepCtx(ctx, 2*time.Millisecond); err != nil {
			return s, err
		}
	}
	s.listed = time.Since(t0)

	var mu sync.Mutex
	deadline := t0.Add(30 * time.Second)
	forEach(ctx, len(ids), restartParallel, func(i int) error {
		first := true
		for {
			text, err := srv.c.Screen(ctx, ids[i], false, restartScrollback)
			if err == nil && text == before[i] {
				mu.Lock()
				s.live = max(s.live, time.Since(t0))
				if !first {
					s.firstWrong++
				}
				mu.Unlock()
				return nil
			}
			first = false
			if time.Now().After(deadline) || ctx.Err() != nil {
				mu.Lock()
				s.mismatches++
				mu.Unlock()
				return nil
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	if ctx.Err() != nil {
		return s, ctx.Err()
	}
	if s.mismatches > 0 {
		// Still a sample: the time is until the last right screen, and the
		// mismatches are reported beside it.
		s.live = time.Since(t0)
	}
	return s, nil
}

func allRunning(list []api.Session, ids []string) bool {
	state := make(map[string]string, len(list))
	for _, s := range list {
		state[s.ID] = s.State
	}
	for _, id := range ids {
		if state[id] != "running" {
			return false
		}
	}
	return true
}

// containsLine reports whether one line of text is exactly line (trailing
// spaces aside, which screen text never has).
func containsLine(text, line string) bool {
	for len(text) > 0 {
		l, rest, _ := cutLine(text)
		if l == line {
			return true
		}
		text = rest
	}
	return false
}

func cutLine(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// forEach runs fn(0..n-1) on up to par goroutines and returns the first
// error (the others still run to their end).
func forEach(ctx context.Context, n, par int, fn func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  int
	)
	for range min(par, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if i >= n || stop || ctx.Err() != nil {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sessionLogBytes is the on-disk size of every session's output log in a
// state directory, to report what the restart had behind it.
func sessionLogBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".seg" {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
