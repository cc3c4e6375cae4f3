package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The fan-out, stalled-viewer, latency and screen-model sections of the
// report. As for throughput, each table is built once as cells and rendered
// both as plain text and as Markdown.

// stalledGoal is the project's goal for the stalled-viewer case: the
// producer keeps at least this share of its throughput.
const stalledGoal = 0.90

// The fan-out goals: one WebSocket viewer gets at least wsGoalRaw of the
// raw pty's throughput; 8 and 64 viewers take at most fanGoal[n] times the
// one viewer's time, with no byte lost to any of them.
const wsGoalRaw = 0.85

var fanGoal = map[int]float64{8: 1.2, 64: 2}

// fanGoalCell says whether a fan-out case met its goal.
func (rep *report) fanGoalCell(r *fanResult, med float64) string {
	if r.c.viewers == 1 {
		raw := rep.rawMedian()
		return fmt.Sprintf("≥ %.2f× raw pty: %s", wsGoalRaw, verdict(raw > 0 && med >= wsGoalRaw*raw))
	}
	g, ok := fanGoal[r.c.viewers]
	if !ok {
		return "–"
	}
	var one float64
	for _, o := range rep.fan {
		if o.c.viewers == 1 && !o.c.stalled && len(o.samples) > 0 {
			one = o.median()
		}
	}
	lost := false
	for _, s := range r.samples {
		lost = lost || s.snapshots > 0 || s.minBytes < r.size
	}
	if one <= 0 {
		return fmt.Sprintf("no byte lost: %s (no 1-viewer time to compare)", verdict(!lost))
	}
	times := one / med // time ∝ 1/throughput
	return fmt.Sprintf("≤ %.1f× the 1-viewer time (%.2f×), no byte lost in any run: %s", g, times, verdict(times <= g && !lost))
}

func (r *fanResult) rates() []float64 {
	var xs []float64
	for _, s := range r.samples {
		xs = append(xs, mbps(r.size, s.wall))
	}
	return xs
}

func (r *fanResult) median() float64 {
	if len(r.samples) == 0 {
		return 0
	}
	return median(r.rates())
}

// medianOf is the median of f over the samples.
func medianOf[T any](xs []T, f func(T) float64) float64 {
	var v []float64
	for _, x := range xs {
		v = append(v, f(x))
	}
	if len(v) == 0 {
		return 0
	}
	return median(v)
}

func (rep *report) ratioToRaw(m float64) string {
	raw := rep.rawMedian()
	if raw <= 0 || m <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", m/raw)
}

var fanHead = []string{"viewers", "file", "median MB/s", "min–max MB/s", "ratio to raw pty", "runs",
	"least bytes at a viewer / file", "snapshots at the viewers (median per run)", "termkeep server CPU", "holder CPU", "bench (the viewers) CPU", "all CPUs", "goal"}

func (rep *report) fanRows() [][]string {
	var rows [][]string
	for _, r := range rep.fan {
		if r.c.stalled {
			continue
		}
		runs := fmt.Sprintf("%d/%d", len(r.samples), len(r.samples)+len(r.errs))
		file := fmt.Sprintf("%d MiB", r.c.mib)
		if len(r.samples) == 0 {
			rows = append(rows, []string{r.c.label(), file, "failed", "", "", runs, "", "", "", "", "", "", ""})
			continue
		}
		xs := r.rates()
		med := median(xs)
		wall := medianOf(r.samples, func(s fanSample) float64 { return s.wall.Seconds() })
		cpu := func(get func(cpuUse) time.Duration) string {
			var v []float64
			for _, s := range r.samples {
				if d := get(s.cpu); d >= 0 {
					v = append(v, d.Seconds())
				}
			}
			if len(v) == 0 {
				return "–"
			}
			m := median(v)
			return fmt.Sprintf("%.2f s (%.0f%%)", m, 100*m/wall)
		}
		rows = append(rows, []string{
			r.c.label(), file, fmt.Sprintf("%.1f", med), fmt.Sprintf("%.1f–%.1f", xs[0], xs[len(xs)-1]),
			rep.ratioToRaw(med), runs,
			fmt.Sprintf("%.3f×", medianOf(r.samples, func(s fanSample) float64 { return float64(s.minBytes) / float64(r.size) })),
			fmt.Sprintf("%.0f", medianOf(r.samples, func(s fanSample) float64 { return float64(s.snapshots) })),
			cpu(func(u cpuUse) time.Duration { return u.server }),
			cpu(func(u cpuUse) time.Duration { return u.owner }),
			cpu(func(u cpuUse) time.Duration { return u.bench }),
			cpu(func(u cpuUse) time.Duration { return u.all }),
			rep.fanGoalCell(r, med),
		})
	}
	return rows
}

var stallHead = []string{"case", "file", "median MB/s", "min–max MB/s", "ratio to raw pty", "runs", "resyncs logged per run (median, max)"}

func (rep *report) stallRows() [][]string {
	var rows [][]string
	for _, r := range rep.fan {
		if r.c.viewers != 1 {
			continue
		}
		name := "none stalled: 1 WebSocket viewer"
		if r.c.stalled {
			name = "1 WebSocket viewer + 1 that never reads"
		}
		runs := fmt.Sprintf("%d/%d", len(r.samples), len(r.samples)+len(r.errs))
		if len(r.samples) == 0 {
			rows = append(rows, []string{name, fmt.Sprintf("%d MiB", r.c.mib), "failed", "", "", runs, ""})
			continue
		}
		xs := r.rates()
		med := median(xs)
		maxRes := 0
		for _, s := range r.samples {
			maxRes = max(maxRes, s.resyncs)
		}
		rows = append(rows, []string{
			name, fmt.Sprintf("%d MiB", r.c.mib), fmt.Sprintf("%.1f", med), fmt.Sprintf("%.1f–%.1f", xs[0], xs[len(xs)-1]),
			rep.ratioToRaw(med), runs,
			fmt.Sprintf("%.0f, %d", medianOf(r.samples, func(s fanSample) float64 { return float64(s.resyncs) }), maxRes),
		})
	}
	return rows
}

// stallVerdict compares the two single-viewer cases.
func (rep *report) stallVerdict() string {
	var none, stalled *fanResult
	for _, r := range rep.fan {
		if r.c.viewers == 1 && !r.c.stalled {
			none = r
		}
		if r.c.viewers == 1 && r.c.stalled {
			stalled = r
		}
	}
	if none == nil || stalled == nil || len(none.samples) == 0 || len(stalled.samples) == 0 {
		return "The stalled-viewer comparison is incomplete (a case did not run or failed)."
	}
	ratio := stalled.median() / none.median()
	verdict := "meets"
	if ratio < stalledGoal {
		verdict = "does NOT meet"
	}
	return fmt.Sprintf("With a stalled viewer the reading viewer gets %.2f× the throughput it gets alone; the goal (at least %.2f×, within 10%%): this run %s it.",
		ratio, stalledGoal, verdict)
}

var latHead = []string{"contender", "p50", "p99", "p99.9", "max", "p50 ratio to raw pty", "p99 ratio to raw pty", "p50 min–max over rounds", "rounds", "goal"}

func fmtLat(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	if d < time.Millisecond {
		return fmt.Sprintf("%.0f µs", sec*1e6)
	}
	return fmt.Sprintf("%.2f ms", sec*1e3)
}

func (rep *report) latRows() [][]string {
	return latRowsOf(rep.lat, map[string]goal{
		"termkeep WebSocket viewer": rep.wsEchoGoal(),
		"termkeep attach":           rep.attachEchoGoal(),
	})
}

// reproRows are the echo-repro section's rows.
func (rep *report) reproRows() [][]string {
	return latRowsOf(rep.latRepro, map[string]goal{"termkeep attach": rep.reproEchoGoal()})
}

// latRowsOf is the latency table of results, with the goal of each
// contender that has one.
func latRowsOf(results []*latResult, goals map[string]goal) [][]string {
	raw50, raw99 := latMedianIn(results, "raw pty", latP50), latMedianIn(results, "raw pty", latP99)
	ratio := func(x, raw float64) string {
		if raw <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f", x/raw)
	}
	var rows [][]string
	for _, r := range results {
		runs := fmt.Sprintf("%d/%d", len(r.samples), len(r.samples)+len(r.errs))
		switch {
		case r.skipped != "":
			rows = append(rows, []string{r.c.name, "skipped: " + r.skipped, "", "", "", "", "", "", "", ""})
			continue
		case len(r.samples) == 0:
			rows = append(rows, []string{r.c.name, "failed", "", "", "", "", "", "", runs, ""})
			continue
		}
		p50, p99 := medianOf(r.samples, latP50), medianOf(r.samples, latP99)
		p999, mx := medianOf(r.samples, latP999), medianOf(r.samples, latMax)
		var p50s []float64
		for _, s := range r.samples {
			p50s = append(p50s, s.p50.Seconds())
		}
		slices.Sort(p50s)
		goal := "–"
		if g, ok := goals[r.c.name]; ok {
			goal = g.cell()
		}
		rows = append(rows, []string{
			r.c.name, fmtLat(p50), fmtLat(p99), fmtLat(p999), fmtLat(mx), ratio(p50, raw50), ratio(p99, raw99),
			fmtLat(p50s[0]) + "–" + fmtLat(p50s[len(p50s)-1]), runs, goal,
		})
	}
	return rows
}

var screenHead = []string{"benchmark", "MB/s", "ns/op", "B/op", "allocs/op"}

func (rep *report) screenRows() [][]string {
	var rows [][]string
	for _, r := range rep.screen.rows {
		mb := "–"
		if r.mbps > 0 {
			mb = fmt.Sprintf("%.1f", r.mbps)
		}
		rows = append(rows, []string{r.name, mb, fmt.Sprintf("%.0f", r.nsPerOp), r.bPerOp, r.allocsOp})
	}
	return rows
}

// failures lists the errors of failed runs, for the end of the report.
func (rep *report) failures() []string {
	var out []string
	add := func(name string, errs []string) {
		for _, e := range errs {
			out = append(out, name+": "+e)
		}
	}
	for _, r := range rep.results {
		add("throughput, "+r.c.name, r.errs)
	}
	for _, r := range rep.fan {
		add("fan-out, "+r.c.label(), r.errs)
	}
	for _, r := range rep.attachFan {
		add("fan-out, "+r.c.name, r.errs)
	}
	for _, r := range rep.lat {
		add("latency, "+r.c.name, r.errs)
	}
	for _, r := range rep.latRepro {
		add("echo-repro, "+r.c.name, r.errs)
	}
	return append(out, rep.sessionsFailures()...)
}

func (rep *report) fanMethod() []string {
	return []string{
		"One session runs the throughput command (print the ready line, wait for a key, `cat` the file) in a fresh " +
			"server per run; N WebSocket viewers connect to the server's TCP listener (`/ws/sessions/{id}?from=0`, bearer token, " +
			"the server's own Origin), each reading every frame (one wire frame per binary message) and answering the server's pings, " +
			"all in the bench process. A run is timed from the go keystroke (an Input frame from the first viewer) until the last " +
			"viewer has the end marker; MB/s is the file's bytes over that time, and the ratio is over the raw pty's median in " +
			"the throughput table above (same bench run).",
		rep.fan64Note() +
			"A viewer that falls more than the server's viewer queue (1 MiB by default) behind is skipped to the present with " +
			"a snapshot of the screen (a resync), so a viewer may receive fewer bytes than the file: the \"least bytes\" column is " +
			"the fewest any viewer received; the end marker then reaches it in a snapshot or in the output after one. " +
			"CPU is per run, median, as in the throughput CPU table; the bench's CPU is its viewers' work.",
	}
}

func (rep *report) fan64Note() string {
	if rep.cfg.fan64MiB == rep.cfg.fanMiB {
		return fmt.Sprintf("Every case prints the same %d MiB file as the throughput table. ", rep.cfg.fanMiB)
	}
	return fmt.Sprintf("The 64-viewer case prints a %d MiB file, the others %d MiB (-fan64-size). ", rep.cfg.fan64MiB, rep.cfg.fanMiB)
}

func (rep *report) stallMethod() []string {
	return []string{
		"The producer's throughput as the one reading WebSocket viewer sees it, with no other viewer (the first row of " +
			"the fan-out table, same runs) and with one more WebSocket viewer attached that reads nothing after its Welcome, so the " +
			"server's writes to it block once the socket buffers are full. The two cases run interleaved, round by round. " +
			"Resyncs are the server's log lines \"" + resyncMsg + "\" during the run (any viewer).",
	}
}

func (rep *report) latMethod() []string {
	return []string{
		fmt.Sprintf("`cat` runs in a cooked terminal (%d×%d), so the session's pty echoes each key. The bench types one key "+
			"(a letter), times until the viewer shows it (escape sequences around it skipped, for renderers such as tmux), "+
			"and only then types the next: %d keys per round, %d rounds, the contenders interleaved, a fresh process tree "+
			"(and termkeep server) per round. Every %d keys an Enter (not timed) makes cat write the line back; the next "+
			"key waits until the output has been quiet for %v. Each figure is the median over the rounds of that round's "+
			"p50, p99 or max.", termCols, termRows, rep.cfg.keys, rep.cfg.rounds, echoEnterEvery, echoQuiet),
	}
}

func (rep *report) reproMethod() []string {
	return []string{
		fmt.Sprintf("Each contender hosts `%s` (PS1 `%s`, TERM xterm-256color, LANG C.UTF-8) in a %d×%d terminal; the bench "+
			"waits for its prompt and types `cat` and Enter, so cat runs as the shell's job, as a user's would. The client is the "+
			"tool's own attach command in a %d×%d pty (raw pty: the bench is the terminal). One key at a time, each typed once "+
			"the last one shows (escape sequences skipped): %d keys not timed, then %d timed, with no Enter, so the line wraps "+
			"past the terminal's width. %d rounds, the contenders interleaved, a fresh process tree (and termkeep server) per "+
			"round; each figure is the median over the rounds of that round's figure. Run alone: `%s`.",
			strings.Join(reproShell, " "), reproPrompt, reproCols, reproRows, reproCols, reproRows, reproWarm, reproKeys,
			rep.cfg.rounds, rep.onlyCommand("echo-repro")),
	}
}

// sectionsRun says which sections this run measured.
func (rep *report) sectionsRun() string {
	return strings.Join(rep.ran, ", ")
}
