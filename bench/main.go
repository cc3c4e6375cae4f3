// Command bench measures termkeep's output throughput against the raw pty
// (the physical limit on this machine) and tmux, and the memory of idle
// holders. `make bench` runs it and writes docs/PERFORMANCE.md;
// `make bench-quick` is a smaller run that prints the table only.
//
// Every contender prints the same file with cat into a terminal of the same
// size and is timed from the keystroke that starts cat until the file's last
// line reaches the viewer. Contenders run interleaved (A B C D A B C D …) so
// that the noise of a shared machine lands on all of them alike, and every
// figure is a median with its min–max, never a single run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Sizes and rounds of the two modes. The full run must stay under ten
// minutes on two cores; the quick one under two.
const (
	fullMiB     = 256
	fullRounds  = 5
	quickMiB    = 32
	quickRounds = 3
)

type config struct {
	bin    string
	out    string
	quick  bool
	mib    int
	rounds int
	only   string
	memory bool
	args   []string // as given, for the report's "produced by" line
}

func main() {
	var cfg config
	flag.StringVar(&cfg.bin, "bin", "bin", "directory holding the termkeep and termkeep-holder binaries")
	flag.StringVar(&cfg.out, "out", "", "also write the report as Markdown to this file")
	flag.BoolVar(&cfg.quick, "quick", false, fmt.Sprintf("a %d MiB file and %d rounds instead of %d MiB and %d", quickMiB, quickRounds, fullMiB, fullRounds))
	flag.IntVar(&cfg.mib, "size", 0, "file size in MiB (overrides the mode's)")
	flag.IntVar(&cfg.rounds, "rounds", 0, "rounds (overrides the mode's)")
	flag.StringVar(&cfg.only, "only", "", "comma-separated contenders to run (substrings of their names), for experiments")
	flag.BoolVar(&cfg.memory, "memory", true, "also measure idle holder memory")
	flag.Parse()
	cfg.args = os.Args[1:]
	if cfg.mib <= 0 {
		cfg.mib = map[bool]int{true: quickMiB, false: fullMiB}[cfg.quick]
	}
	if cfg.rounds <= 0 {
		cfg.rounds = map[bool]int{true: quickRounds, false: fullRounds}[cfg.quick]
	}
	os.Exit(bench(cfg))
}

func bench(cfg config) int {
	// Ctrl-C cancels the context; every run and every cleanup below is
	// deferred or context-aware, so tmux servers, termkeep servers, holders
	// and temporary files all go before the bench exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()

	bin, err := filepath.Abs(cfg.bin)
	if err != nil {
		return fail(err)
	}
	for _, b := range []string{"termkeep", "termkeep-holder"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return fail(fmt.Errorf("%s is missing from %s: run `make build` first", b, bin))
		}
	}

	work, err := os.MkdirTemp("", "tkb")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(work)

	e := &env{bin: bin, file: filepath.Join(work, "workload.txt"), m: newMarkers()}
	started := time.Now()
	size, err := writeWorkload(e.file, int64(cfg.mib)<<20, e.m)
	if err != nil {
		return fail(fmt.Errorf("write the workload: %w", err))
	}
	logf("workload: %d bytes of build-log lines in %v", size, time.Since(started).Round(time.Millisecond))

	results := selected(cfg.only)
	if len(results) == 0 {
		return fail(fmt.Errorf("-only %q matches no contender", cfg.only))
	}
	// Generous: a contender at 4 MB/s still finishes; one that hangs does
	// not hold the bench forever.
	perRun := 30*time.Second + time.Duration(size/4e6)*time.Second
	for round := 1; round <= cfg.rounds; round++ {
		for _, r := range results {
			if r.skipped != "" {
				continue
			}
			rctx, cancel := context.WithTimeout(ctx, perRun)
			s, err := r.c.run(rctx, e)
			cancel()
			if ctx.Err() != nil {
				logf("interrupted; cleaned up")
				return 130
			}
			switch {
			case errors.Is(err, errSkipped):
				r.skipped = strings.TrimPrefix(err.Error(), errSkipped.Error()+": ")
				logf("%-22s skipped: %s", r.c.name, r.skipped)
			case err != nil:
				r.errs = append(r.errs, err.Error())
				logf("round %d/%d %-22s FAILED: %v", round, cfg.rounds, r.c.name, err)
			default:
				r.samples = append(r.samples, s)
				logf("round %d/%d %-22s %8.1f MB/s", round, cfg.rounds, r.c.name, mbps(size, s.wall))
			}
		}
	}

	idle := idleResult{err: errors.New("not measured (-memory=false)")}
	if cfg.memory {
		logf("idle memory: %d sessions", idleSessions)
		idle = measureIdle(ctx, bin)
		if ctx.Err() != nil {
			logf("interrupted; cleaned up")
			return 130
		}
	}

	rep := &report{cfg: cfg, size: size, results: results, idle: idle, took: time.Since(started), machine: describeMachine()}
	fmt.Print(rep.text())
	if cfg.out != "" {
		if err := os.WriteFile(cfg.out, []byte(rep.markdown()), 0o644); err != nil {
			return fail(err)
		}
		logf("wrote %s", cfg.out)
	}
	for _, r := range results {
		if r.skipped == "" && len(r.samples) == 0 {
			return 1
		}
	}
	return 0
}

// result collects one contender's runs.
type result struct {
	c       contender
	samples []sample
	errs    []string
	skipped string
}

func selected(only string) []*result {
	var out []*result
	for _, c := range contenders() {
		if only != "" && !matchesAny(c.name, strings.Split(only, ",")) {
			continue
		}
		out = append(out, &result{c: c})
	}
	return out
}

func matchesAny(name string, subs []string) bool {
	for _, s := range subs {
		if s = strings.TrimSpace(s); s != "" && strings.Contains(name, s) {
			return true
		}
	}
	return false
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "bench:", err)
	return 1
}
