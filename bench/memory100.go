package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Memory per session: what each session costs, as PSS (a process's
// private pages plus its share of the pages it shares), for termkeep, tmux
// and dtach, each hosting the same N `sh`s. The shells themselves are left
// out: they are the same in all three.
//
//   - termkeep: (the server's PSS + every holder's PSS) / N: all that
//     termkeep costs, its fixed part included. The marginal figure
//     ((server PSS with the sessions − with none) / N, plus the median
//     holder) is logged beside it.
//   - tmux: one server with N sessions: its PSS / N (no client attached).
//   - dtach: N `dtach -n` masters: the median master's PSS.
//
// The cases: N idle sessions; the same with each session's scrollback
// full first (10,000 lines: termkeep's screen model keeps its default
// 10,000, tmux its default history-limit of 2,000, dtach none); N
// sessions each printing a line every 50 ms while they are read; and
// many more idle sessions.

const (
	memScrollLines  = 10000
	memGoalKiB      = 1024            // an idle session's PSS, termkeep
	memGoalFullKiB  = 2048            // with a full scrollback
	memGoalShareKiB = 350             // the server's share of an idle session, at N sessions
	memSettleBefore = 2 * time.Second // a fresh server before its empty figure
	// memSettle is how long the sessions sit before their memory is read:
	// past the 5 s after which a quiet session's server keeps only 64 KiB
	// of its recent output in memory (the rest is on disk), so the figure
	// is an idle session's.
	memSettle = 8 * time.Second
)

// memCase is one of the cases.
type memCase struct {
	name   string
	scroll bool // each session prints memScrollLines lines first
	busy   bool // each session prints a line every 50 ms while it is read
	many   bool // config.memSessionsMany sessions, not config.memSessions
}

var memCases = []memCase{{name: "idle"}, {name: "full scrollback", scroll: true}, {name: "busy", busy: true}, {name: "idle", many: true}}

func (c memCase) sessions(cfg config) int {
	if c.many {
		return cfg.memSessionsMany
	}
	return cfg.memSessions
}

// memFigure is one contender's figures in one round: KiB per session, and
// the parts they were computed from.
type memFigure struct {
	perPss, perPrivate float64 // KiB per session
	serverShare        float64 // termkeep: the server's PSS / N
	holder             float64 // termkeep: the mean holder's PSS
	parts              string  // how the figure was made, for the log
}

type memResult struct {
	contender string
	c         memCase
	samples   []memFigure
	errs      []string
	skipped   string
}

type memReport struct {
	sessions, many int
	results        []*memResult
	err            error
}

// memContender sets up n sessions (start returns once every session is up
// and, with a file, has printed it) and returns how to read their memory
// and how to end them. The three contenders of a case are set up side by
// side and read after one settle time.
type memContender struct {
	name  string
	start func(ctx context.Context, e *env, n int, cmd []string, file string) (measure func() (memFigure, error), stop func(), err error)
}

func memContenders() []memContender {
	return []memContender{
		{"termkeep", memTermkeep},
		{"tmux", memTmux},
		{"dtach", memDtach},
	}
}

func runMemory100(ctx context.Context, e *env, cfg config) *memReport {
	rep := &memReport{sessions: cfg.memSessions, many: cfg.memSessionsMany}
	path := filepath.Join(e.work, fmt.Sprintf("lines-%d.txt", memScrollLines))
	if _, err := writeLines(path, memScrollLines, e.m); err != nil {
		rep.err = err
		return rep
	}
	for _, c := range memCases {
		for _, mc := range memContenders() {
			rep.results = append(rep.results, &memResult{contender: mc.name, c: c})
		}
	}
	for round := 1; round <= cfg.memRounds; round++ {
		for _, c := range memCases {
			if err := memRound(ctx, e, cfg, rep, c, path, round); err != nil {
				rep.err = err
				return rep
			}
		}
	}
	return rep
}

// memRound sets up every contender of case c, lets them settle, and reads
// them. It returns an error only when interrupted.
func memRound(ctx context.Context, e *env, cfg config, rep *memReport, c memCase, path string, round int) error {
	file := ""
	if c.scroll {
		file = path
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	type running struct {
		r       *memResult
		measure func() (memFigure, error)
	}
	var all []running
	fail := func(r *memResult, err error) {
		switch {
		case errors.Is(err, errSkipped):
			r.skipped = strings.TrimPrefix(err.Error(), errSkipped.Error()+": ")
			logf("memory100 %-8s skipped: %s", r.contender, r.skipped)
		default:
			r.errs = append(r.errs, err.Error())
			logf("memory100 %d/%d %-8s %-15s %4d FAILED: %v", round, cfg.memRounds, r.contender, c.name, c.sessions(cfg), err)
		}
	}
	for _, mc := range memContenders() {
		var r *memResult
		for _, x := range rep.results {
			if x.contender == mc.name && x.c == c {
				r = x
			}
		}
		if r.skipped != "" {
			continue
		}
		measure, stop, err := mc.start(rctx, e, c.sessions(cfg), memCommand(c, file), file)
		if ctx.Err() != nil {
			if stop != nil {
				stop()
			}
			return ctx.Err()
		}
		if err != nil {
			fail(r, err)
			continue
		}
		defer stop()
		all = append(all, running{r, measure})
	}
	if err := sleepCtx(ctx, memSettle); err != nil {
		return err
	}
	for _, x := range all {
		f, err := x.measure()
		if err != nil {
			fail(x.r, err)
			continue
		}
		x.r.samples = append(x.r.samples, f)
		logf("memory100 %d/%d %-8s %-15s %4d %6.0f KiB PSS per session (%s)", round, cfg.memRounds, x.r.contender, c.name, c.sessions(cfg), f.perPss, f.parts)
	}
	return nil
}

// memCommand is each session's command in case c: an interactive sh,
// after printing the file when there is one; or a loop that prints.
func memCommand(c memCase, file string) []string {
	switch {
	case c.busy:
		return []string{"sh", "-c", `i=0; while :; do i=$((i+1)); echo "busy line $i"; sleep 0.05; done`}
	case c.scroll:
		return []string{"sh", "-c", "cat " + shellQuote(file) + "; exec sh"}
	}
	return []string{"sh"}
}

func memTermkeep(ctx context.Context, e *env, n int, cmd []string, file string) (func() (memFigure, error), func(), error) {
	srv, err := startServer(ctx, e.bin)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (func() (memFigure, error), func(), error) { srv.close(); return nil, nil, err }
	if err := sleepCtx(ctx, memSettleBefore); err != nil {
		return fail(err)
	}
	base, err := procMemory(srv.pid())
	if err != nil {
		return fail(err)
	}
	ids := make([]string, n)
	holders := make([]int, n)
	err = forEach(ctx, n, 8, func(i int) error {
		sess, hp, err := srv.create(ctx, fmt.Sprintf("m%d", i), cmd)
		ids[i], holders[i] = sess.ID, hp
		return err
	})
	if err != nil {
		return fail(err)
	}
	if file != "" {
		// The model has the whole file once the end marker is on screen.
		err := forEach(ctx, n, 4, func(i int) error {
			for deadline := time.Now().Add(time.Minute); ; {
				text, err := srv.c.Screen(ctx, ids[i], false, 0)
				if err == nil && strings.Contains(text, string(e.m.end)) {
					return nil
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("session %d: the file never reached its screen (%v)", i, err)
				}
				if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
					return err
				}
			}
		})
		if err != nil {
			return fail(err)
		}
	}
	measure := func() (memFigure, error) {
		full, err := procMemory(srv.pid())
		if err != nil {
			return memFigure{}, err
		}
		var pss, priv []float64
		var sumPss, sumPriv float64
		for _, pid := range holders {
			m, err := procMemory(pid)
			if err != nil {
				return memFigure{}, fmt.Errorf("holder %d: %w", pid, err)
			}
			pss = append(pss, float64(m.Pss))
			priv = append(priv, float64(m.Private))
			sumPss, sumPriv = sumPss+float64(m.Pss), sumPriv+float64(m.Private)
		}
		per := func(k float64) float64 { return k / float64(n) }
		marginal := per(float64(full.Pss-base.Pss)) + median(pss)
		return memFigure{
			perPss: per(float64(full.Pss) + sumPss), perPrivate: per(float64(full.Private) + sumPriv),
			serverShare: per(float64(full.Pss)), holder: per(sumPss),
			parts: fmt.Sprintf("server %d KiB PSS (%d with no session): %.0f KiB a session; holders %.0f KiB each (median %.0f); marginal %.0f KiB",
				full.Pss, base.Pss, per(float64(full.Pss)), per(sumPss), median(pss), marginal),
		}, nil
	}
	return measure, srv.close, nil
}

func memTmux(ctx context.Context, e *env, n int, command []string, file string) (func() (memFigure, error), func(), error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, nil, fmt.Errorf("%w: tmux is not installed", errSkipped)
	}
	tmux, sock := e.newTmux()
	stop := func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		tmux(c, "kill-server").Run()
		os.Remove(sock)
	}
	fail := func(err error) (func() (memFigure, error), func(), error) { stop(); return nil, nil, err }
	// Sessions are made 20 to a tmux command, each the size of the others'.
	cmd := strings.Join(command, " ")
	if len(command) == 3 {
		cmd = command[2] // tmux runs it with sh -c
	}
	for i := 0; i < n; i += 20 {
		var args []string
		for j := i; j < min(i+20, n); j++ {
			if j > i {
				args = append(args, ";")
			}
			args = append(args, "new-session", "-d", "-s", fmt.Sprintf("m%d", j), "-x", strconv.Itoa(termCols), "-y", strconv.Itoa(termRows), cmd)
		}
		if out, err := tmux(ctx, args...).CombinedOutput(); err != nil {
			return fail(fmt.Errorf("tmux new-session: %v: %s", err, out))
		}
	}
	if file != "" {
		// Every pane's history is full: tmux drops a tenth of the
		// history-limit at a time once it is reached, so a full pane
		// holds between nine tenths of it and all of it.
		out, err := tmux(ctx, "show-options", "-gv", "history-limit").Output()
		if err != nil {
			return fail(fmt.Errorf("tmux show-options: %w", err))
		}
		limit, _ := strconv.Atoi(strings.TrimSpace(string(out)))
		want := min(limit*9/10, memScrollLines-termRows)
		for deadline := time.Now().Add(time.Minute); ; {
			out, err := tmux(ctx, "list-panes", "-a", "-F", "#{history_size}").Output()
			if err != nil {
				return fail(fmt.Errorf("tmux list-panes: %w", err))
			}
			full := 0
			for _, f := range strings.Fields(string(out)) {
				if h, _ := strconv.Atoi(f); h >= want {
					full++
				}
			}
			if full == n {
				break
			}
			if time.Now().After(deadline) {
				return fail(fmt.Errorf("only %d of %d tmux panes have %d lines of history", full, n, want))
			}
			if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
				return fail(err)
			}
		}
	}
	out, err := tmux(ctx, "display-message", "-p", "-t", "m0", "#{pid}").Output()
	if err != nil {
		return fail(fmt.Errorf("tmux display-message: %w", err))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return fail(fmt.Errorf("tmux display-message: %q", out))
	}
	measure := func() (memFigure, error) {
		m, err := procMemory(pid)
		if err != nil {
			return memFigure{}, err
		}
		return memFigure{
			perPss: float64(m.Pss) / float64(n), perPrivate: float64(m.Private) / float64(n),
			parts: fmt.Sprintf("server %d KiB PSS", m.Pss),
		}, nil
	}
	return measure, stop, nil
}

func memDtach(ctx context.Context, e *env, n int, cmd []string, file string) (func() (memFigure, error), func(), error) {
	if _, err := exec.LookPath("dtach"); err != nil {
		return nil, nil, fmt.Errorf("%w: dtach is not installed (apt-get install dtach)", errSkipped)
	}
	e.seq++
	dir := filepath.Join(e.work, fmt.Sprintf("dtach-%d", e.seq))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, nil, err
	}
	// Every master, and its child, is ended however this goes.
	stop := func() {
		for _, pid := range pidsWithCmdline(dir + "/") {
			if c := firstChild(pid); c > 0 {
				syscall.Kill(c, syscall.SIGKILL)
			}
			syscall.Kill(pid, syscall.SIGKILL)
		}
		os.RemoveAll(dir)
	}
	for i := range n {
		// -n detaches at once; stdin is not a terminal, so the session's
		// pty gets dtach's defaults. -E: no detach key, -z: no suspend key
		// (no client will ever send one).
		args := append([]string{"-n", filepath.Join(dir, fmt.Sprintf("s%d", i)), "-E", "-z"}, cmd...)
		c := exec.CommandContext(ctx, "dtach", args...)
		c.Env = viewerEnv()
		if out, err := c.CombinedOutput(); err != nil {
			stop()
			return nil, nil, fmt.Errorf("dtach -n: %v: %s", err, out)
		}
	}
	measure := func() (memFigure, error) {
		pids := pidsWithCmdline(dir + "/")
		if len(pids) != n {
			return memFigure{}, fmt.Errorf("%d dtach masters running, want %d", len(pids), n)
		}
		var pss, priv []float64
		for _, pid := range pids {
			m, err := procMemory(pid)
			if err != nil {
				return memFigure{}, err
			}
			pss = append(pss, float64(m.Pss))
			priv = append(priv, float64(m.Private))
		}
		slices.Sort(pss)
		return memFigure{
			perPss: median(pss), perPrivate: median(priv),
			parts: fmt.Sprintf("masters %.0f–%.0f KiB PSS", pss[0], pss[len(pss)-1]),
		}, nil
	}
	return measure, stop, nil
}
