// Command bench measures termkeep against the raw pty (the physical limit
// on this machine), tmux and dtach: output throughput, fan-out to WebSocket
// viewers (and a stalled one) and to attached terminals, keystroke echo
// latency (with each echo goal met or missed), the screen model's own Go
// benchmarks, and the memory of idle holders. `make bench` runs it and
// writes docs/PERFORMANCE.md; `make bench-quick` is a smaller run that prints
// only.
//
// Every throughput contender prints the same file with cat into a terminal
// of the same size and is timed from the keystroke that starts cat until the
// file's last line reaches the viewer. Contenders run interleaved (A B C D A
// B C D …) so that the noise of a shared machine lands on all of them alike,
// and every figure is a median with its min–max, never a single run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
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

	fullKeys  = 1000
	quickKeys = 200

	fullBenchtime  = "1s"
	quickBenchtime = "200ms"

	// Reattach: the long history behind the session, and how many fresh
	// viewers of each kind are timed (interleaved).
	fullReattachMiB    = 1024
	quickReattachMiB   = 64
	fullReattachTries  = 9
	quickReattachTries = 5

	// Server restart: sessions, the output each printed, and restarts.
	fullRestartSessions  = 100
	quickRestartSessions = 20
	fullRestartMiB       = 8
	quickRestartMiB      = 8
	fullRestartRounds    = 5
	quickRestartRounds   = 3

	// Memory at 100 sessions: sessions, and rounds of every case.
	fullMemSessions      = 50
	quickMemSessions     = 50
	fullMemSessionsMany  = 1000
	quickMemSessionsMany = 200
	fullMemRounds        = 2
	quickMemRounds       = 1

	// Scale: sessions (one viewer each) and how long they print.
	fullScaleSessions  = 500
	quickScaleSessions = 50
	fullScaleSeconds   = 60
	quickScaleSeconds  = 10
)

// sections are the parts of the bench that -skip can leave out.
var sections = []string{"throughput", "fanout", "latency", "echo-repro", "screen", "memory", "reattach", "restart", "memory100", "scale", "predict", "ssh-echo"}

type config struct {
	bin       string
	out       string
	quick     bool
	mib       int
	rounds    int
	fanMiB    int // fan-out file for 1 and 8 viewers (and the stalled case)
	fan64MiB  int // fan-out file for 64 viewers
	keys      int // keystrokes per latency round
	benchtime string
	only      string
	skip      map[string]bool
	memory    bool
	args      []string // as given, for the report's "produced by" line

	reattachMiB     int // the long history behind the reattached session
	reattachTries   int // fresh viewers timed per contender and history
	restartSessions int
	restartMiB      int // output each session printed before the restarts
	restartRounds   int
	memSessions     int
	memSessionsMany int // the memory comparison's second count of idle sessions
	memRounds       int
	scaleSessions   int
	scaleSeconds    int
}

// runs reports whether a section is measured: not skipped, and, when -only
// is given, named by it (the section's name, or a contender or case of it).
func (c config) runs(section string, names ...string) bool {
	if c.skip[section] {
		return false
	}
	if c.only == "" {
		return true
	}
	subs := strings.Split(c.only, ",")
	if matchesAny(section, subs) {
		return true
	}
	for _, n := range names {
		if matchesAny(n, subs) {
			return true
		}
	}
	return false
}

func main() {
	var cfg config
	flag.StringVar(&cfg.bin, "bin", "bin", "directory holding the termkeep and termkeep-holder binaries")
	flag.StringVar(&cfg.out, "out", "", "also write the report as Markdown to this file")
	flag.BoolVar(&cfg.quick, "quick", false, fmt.Sprintf("a %d MiB file, %d rounds, %d keys and -benchtime %s instead of %d MiB, %d, %d and %s", quickMiB, quickRounds, quickKeys, quickBenchtime, fullMiB, fullRounds, fullKeys, fullBenchtime))
	flag.IntVar(&cfg.mib, "size", 0, "file size in MiB (overrides the mode's)")
	flag.IntVar(&cfg.rounds, "rounds", 0, "rounds (overrides the mode's)")
	flag.StringVar(&cfg.only, "only", "", "comma-separated sections or contenders to run, for experiments: a section's name runs all of it ("+strings.Join(sections, ", ")+"); a contender's name (a substring: raw, tmux, termkeep attach, …; fan-out cases ws1, ws1+stalled, ws8, ws64) runs that contender of throughput, fanout or latency")
	flag.IntVar(&cfg.fan64MiB, "fan64-size", 0, "file size in MiB for the 64-viewer fan-out (overrides the mode's)")
	flag.IntVar(&cfg.keys, "keys", 0, "keystrokes per latency round (overrides the mode's)")
	flag.StringVar(&cfg.benchtime, "benchtime", "", "-benchtime of the screen model's Go benchmarks (overrides the mode's)")
	flag.BoolVar(&cfg.memory, "memory", true, "also measure idle holder memory (same as leaving memory out of -skip)")
	flag.IntVar(&cfg.reattachMiB, "reattach-size", 0, fmt.Sprintf("history behind the reattached session in MiB (default %d, quick %d)", fullReattachMiB, quickReattachMiB))
	flag.IntVar(&cfg.reattachTries, "reattach-tries", 0, fmt.Sprintf("fresh viewers timed per contender and history (default %d, quick %d)", fullReattachTries, quickReattachTries))
	flag.IntVar(&cfg.restartSessions, "restart-sessions", 0, fmt.Sprintf("sessions for the server restart (default %d, quick %d)", fullRestartSessions, quickRestartSessions))
	flag.IntVar(&cfg.restartMiB, "restart-size", 0, fmt.Sprintf("output each restarted session printed, in MiB (default %d, quick %d)", fullRestartMiB, quickRestartMiB))
	flag.IntVar(&cfg.restartRounds, "restart-rounds", 0, fmt.Sprintf("server restarts (default %d, quick %d)", fullRestartRounds, quickRestartRounds))
	flag.IntVar(&cfg.memSessions, "memory-sessions", 0, fmt.Sprintf("sessions for the memory comparison (default %d, quick %d)", fullMemSessions, quickMemSessions))
	flag.IntVar(&cfg.memSessionsMany, "memory-sessions-many", 0, fmt.Sprintf("idle sessions for the memory comparison's large case (default %d, quick %d)", fullMemSessionsMany, quickMemSessionsMany))
	flag.IntVar(&cfg.scaleSessions, "scale-sessions", 0, fmt.Sprintf("sessions for the scale run, one viewer each (default %d, quick %d)", fullScaleSessions, quickScaleSessions))
	flag.IntVar(&cfg.scaleSeconds, "scale-seconds", 0, fmt.Sprintf("seconds the scale run prints (default %d, quick %d)", fullScaleSeconds, quickScaleSeconds))
	flag.Func("attach-args", "more arguments of termkeep attach in the throughput and latency contenders, split at spaces (A/B runs: --predict=always)", func(v string) error {
		attachArgs = strings.Fields(v)
		return nil
	})
	flag.StringVar(&keepLogs, "keep-logs", "", "copy each termkeep server's log into this directory before its state directory is removed (to read why a viewer was resynced)")
	skip := flag.String("skip", "", "comma-separated sections to leave out: "+strings.Join(sections, ", "))
	flag.Parse()
	cfg.args = os.Args[1:]
	pick := func(quick, full int) int { return map[bool]int{true: quick, false: full}[cfg.quick] }
	if cfg.mib <= 0 {
		cfg.mib = pick(quickMiB, fullMiB)
	}
	if cfg.rounds <= 0 {
		cfg.rounds = pick(quickRounds, fullRounds)
	}
	cfg.fanMiB = cfg.mib
	if cfg.fan64MiB <= 0 {
		cfg.fan64MiB = cfg.mib
	}
	if cfg.keys <= 0 {
		cfg.keys = pick(quickKeys, fullKeys)
	}
	if cfg.benchtime == "" {
		cfg.benchtime = map[bool]string{true: quickBenchtime, false: fullBenchtime}[cfg.quick]
	}
	def := func(v *int, quick, full int) {
		if *v <= 0 {
			*v = pick(quick, full)
		}
	}
	def(&cfg.reattachMiB, quickReattachMiB, fullReattachMiB)
	def(&cfg.reattachTries, quickReattachTries, fullReattachTries)
	def(&cfg.restartSessions, quickRestartSessions, fullRestartSessions)
	def(&cfg.restartMiB, quickRestartMiB, fullRestartMiB)
	def(&cfg.restartRounds, quickRestartRounds, fullRestartRounds)
	def(&cfg.memSessions, quickMemSessions, fullMemSessions)
	def(&cfg.memSessionsMany, quickMemSessionsMany, fullMemSessionsMany)
	def(&cfg.memRounds, quickMemRounds, fullMemRounds)
	def(&cfg.scaleSessions, quickScaleSessions, fullScaleSessions)
	def(&cfg.scaleSeconds, quickScaleSeconds, fullScaleSeconds)
	cfg.skip = map[string]bool{}
	for _, k := range strings.Split(*skip, ",") {
		if k = strings.TrimSpace(k); k == "" {
			continue
		}
		if !slices.Contains(sections, k) {
			fmt.Fprintf(os.Stderr, "bench: -skip %q: the sections are %s\n", k, strings.Join(sections, ", "))
			os.Exit(2)
		}
		cfg.skip[k] = true
	}
	if !cfg.memory {
		cfg.skip["memory"] = true
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

	e := &env{bin: bin, work: work, m: newMarkers()}
	started := time.Now()
	interrupted := func() int {
		logf("interrupted; cleaned up")
		return 130
	}
	rep := &report{cfg: cfg, machine: describeMachine()}

	// ran records that a section starts, and says how long the one before
	// it took (the whole must fit in make bench's 10 minutes).
	var sectionStart time.Time
	sectionTook := func() {
		if len(rep.ran) > 0 {
			logf("%s took %v", rep.ran[len(rep.ran)-1], time.Since(sectionStart).Round(time.Second))
		}
	}
	ran := func(section string) {
		sectionTook()
		rep.ran = append(rep.ran, section)
		sectionStart = time.Now()
	}

	if cfg.runs("throughput", contenderNames()...) {
		ran("throughput")
		if e.file, rep.size, err = e.workload(cfg.mib); err != nil {
			return fail(fmt.Errorf("write the workload: %w", err))
		}
		results := selected(cfg.only)
		rep.results = results
		if code := runThroughput(ctx, e, cfg, results, rep.size); code != 0 {
			return code
		}
	}

	if cfg.runs("fanout", fanCaseNames(cfg)...) {
		ran("fanout")
		rep.fan, err = runFanouts(ctx, e, cfg)
		if ctx.Err() != nil {
			return interrupted()
		}
		if err != nil {
			return fail(fmt.Errorf("fan-out: %w", err))
		}
		rep.attachFan, err = runAttachFans(ctx, e, cfg)
		if ctx.Err() != nil {
			return interrupted()
		}
		if err != nil {
			return fail(fmt.Errorf("fan-out to attached terminals: %w", err))
		}
	}

	if cfg.runs("latency", latContenderNames()...) {
		ran("latency")
		rep.lat = runLatencies(ctx, e, cfg)
		if ctx.Err() != nil {
			return interrupted()
		}
	}

	if cfg.runs("echo-repro") {
		ran("echo-repro")
		rep.latRepro = runRepro(ctx, e, cfg)
		if ctx.Err() != nil {
			return interrupted()
		}
	}

	if cfg.runs("screen") {
		ran("screen")
		logf("screen model: go test -bench (benchtime %s)", cfg.benchtime)
		sr := runScreenBench(ctx, cfg.benchtime)
		rep.screen = &sr
		if ctx.Err() != nil {
			return interrupted()
		}
	}

	rep.idle = idleResult{err: errors.New("not measured in this run")}
	if cfg.runs("memory") {
		ran("memory")
		logf("idle memory: %d sessions", idleSessions)
		rep.idle = measureIdle(ctx, bin)
		if ctx.Err() != nil {
			return interrupted()
		}
	}

	if cfg.runs("reattach") {
		ran("reattach")
		rep.reattach = runReattach(ctx, e, cfg)
		if ctx.Err() != nil {
			return interrupted()
		}
	}

	if cfg.runs("restart") {
		ran("restart")
		rep.restart = runRestart(ctx, e, cfg)
		if ctx.Err() != nil {
			return interrupted()
		}
	}

	if cfg.runs("memory100") {
		ran("memory100")
		logf("memory at %d and %d sessions: termkeep, tmux, dtach", cfg.memSessions, cfg.memSessionsMany)
		rep.mem100 = runMemory100(ctx, e, cfg)
		if ctx.Err() != nil {
			return interrupted()
		}
	}

	if cfg.runs("scale") {
		ran("scale")
		rep.scale = runScale(ctx, e, cfg)
		if ctx.Err() != nil {
			return interrupted()
		}
	}

	if cfg.runs("predict") {
		ran("predict")
		rep.predict = runPredict(ctx, e, cfg)
		if ctx.Err() != nil {
			return interrupted()
		}
	}

	if cfg.runs("ssh-echo") {
		ran("ssh-echo")
		rep.sshEcho = runSSHEcho(ctx, e, cfg)
		if ctx.Err() != nil {
			return interrupted()
		}
	}

	sectionTook()
	rep.took = time.Since(started)
	fmt.Print(rep.text())
	if cfg.out != "" {
		if err := os.WriteFile(cfg.out, []byte(rep.markdown()), 0o644); err != nil {
			return fail(err)
		}
		logf("wrote %s", cfg.out)
	}
	if rep.anyFailed() {
		return 1
	}
	return 0
}

// runThroughput runs the throughput contenders, interleaved round by round.
// It returns an exit code when interrupted, else 0.
func runThroughput(ctx context.Context, e *env, cfg config, results []*result, size int64) int {
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
				extra := ""
				if s.snapshots > 0 || s.gaps > 0 {
					extra = fmt.Sprintf("  (%d snapshots, %d gaps)", s.snapshots, s.gaps)
				}
				logf("round %d/%d %-22s %8.1f MB/s%s", round, cfg.rounds, r.c.name, mbps(size, s.wall), extra)
			}
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
	all := only == "" || matchesAny("throughput", strings.Split(only, ","))
	for _, c := range contenders() {
		if !all && !matchesAny(c.name, strings.Split(only, ",")) {
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

func contenderNames() []string {
	var out []string
	for _, c := range contenders() {
		out = append(out, c.name)
	}
	return out
}

func latContenderNames() []string {
	var out []string
	for _, c := range latContenders() {
		out = append(out, c.name)
	}
	return out
}

func fanCaseNames(cfg config) []string {
	var out []string
	for _, c := range fanCases(cfg) {
		out = append(out, c.name)
	}
	for _, c := range attachFanCases() {
		out = append(out, c.name)
	}
	return out
}
