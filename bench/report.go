package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// privateGoalKiB is the project's stated goal for an idle holder's private
// memory: under 1 MiB.
const privateGoalKiB = 1024

// report renders the figures as a plain table (stdout) and as Markdown
// (docs/PERFORMANCE.md). Both come from the same cells so they cannot
// disagree.
type report struct {
	cfg     config
	size    int64
	results []*result
	fan     []*fanResult
	// attachFan is the fan-out to attached terminals (fanattach.go).
	attachFan []*attachFanResult
	lat       []*latResult
	latRepro  []*latResult // echo-repro
	screen    *screenResult
	idle      idleResult
	ran       []string // the sections measured, in order

	reattach *reattachReport
	restart  *restartReport
	mem100   *memReport
	scale    *scaleReport
	predict  *predictReport
	sshEcho  *sshEchoReport

	took    time.Duration
	machine machine
}

// anyFailed reports whether a contender or case that was not skipped never
// produced a figure.
func (rep *report) anyFailed() bool {
	for _, r := range rep.results {
		if r.skipped == "" && len(r.samples) == 0 {
			return true
		}
	}
	for _, r := range rep.fan {
		if len(r.samples) == 0 {
			return true
		}
	}
	for _, r := range rep.lat {
		if r.skipped == "" && len(r.samples) == 0 {
			return true
		}
	}
	return rep.screen != nil && rep.screen.err != nil || rep.sessionsFailed() || rep.predictFailed() || rep.sshEchoFailed()
}

type machine struct {
	nproc  int
	kernel string
	cpu    string
	goVer  string
	tmux   string
}

func describeMachine() machine {
	m := machine{nproc: runtime.NumCPU(), goVer: runtime.Version(), kernel: "unknown", tmux: "not installed"}
	if out, err := exec.Command("uname", "-r").Output(); err == nil {
		m.kernel = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("tmux", "-V").Output(); err == nil {
		m.tmux = strings.TrimSpace(string(out))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

func mbps(size int64, d time.Duration) float64 { return float64(size) / d.Seconds() / 1e6 }

// median of xs (the mean of the middle two for an even count); xs is sorted
// in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func (r *result) rates(size int64) []float64 {
	var xs []float64
	for _, s := range r.samples {
		xs = append(xs, mbps(size, s.wall))
	}
	return xs
}

func (rep *report) rawMedian() float64 {
	for _, r := range rep.results {
		if r.c.name == "raw pty" && len(r.samples) > 0 {
			return median(r.rates(rep.size))
		}
	}
	return 0
}

// throughputRows is the main table: contender, median, min–max, ratio, runs.
func (rep *report) throughputRows() [][]string {
	raw := rep.rawMedian()
	var rows [][]string
	for _, r := range rep.results {
		switch {
		case r.skipped != "":
			rows = append(rows, []string{r.c.name, "skipped: " + r.skipped, "", "", "", "", "", ""})
			continue
		case len(r.samples) == 0:
			rows = append(rows, []string{r.c.name, "failed", "", "", fmt.Sprintf("0/%d", len(r.errs)), "", "", ""})
			continue
		}
		bytes := medianOf(r.samples, func(s sample) float64 { return float64(s.viewerB) / float64(rep.size) })
		resyncs := "–"
		if r.samples[0].termkeep {
			resyncs = fmt.Sprintf("%.0f", medianOf(r.samples, func(s sample) float64 { return float64(s.resyncs) }))
		}
		xs := r.rates(rep.size)
		med := median(xs)
		ratio := "–"
		if raw > 0 {
			ratio = fmt.Sprintf("%.2f", med/raw)
		}
		goal := "–"
		if r.c.name == "termkeep attach" {
			tmux := rep.medianOf("tmux")
			goal = fmt.Sprintf("≥ %.1f× raw pty and ≥ %.0f× tmux: %s", attachGoalRaw, attachGoalTmux,
				verdict(raw > 0 && tmux > 0 && med >= attachGoalRaw*raw && med >= attachGoalTmux*tmux))
		}
		rows = append(rows, []string{
			r.c.name, fmt.Sprintf("%.1f", med), fmt.Sprintf("%.1f–%.1f", xs[0], xs[len(xs)-1]), ratio,
			fmt.Sprintf("%d/%d", len(r.samples), len(r.samples)+len(r.errs)),
			fmt.Sprintf("%.3f×", bytes), resyncs, goal,
		})
	}
	return rows
}

// The throughput goals for termkeep attach: at least this share of the raw
// pty's throughput, and at least this multiple of tmux's.
const (
	attachGoalRaw  = 0.9
	attachGoalTmux = 2.0
)

// medianOf is the median throughput of the contender named name, or 0.
func (rep *report) medianOf(name string) float64 {
	for _, r := range rep.results {
		if r.c.name == name && len(r.samples) > 0 {
			return median(r.rates(rep.size))
		}
	}
	return 0
}

// cpuRows is where the CPU went, per process, as median seconds per run and
// as a share of the median run's wall time (100% is one core kept busy).
func (rep *report) cpuRows() [][]string {
	var rows [][]string
	for _, r := range rep.results {
		if len(r.samples) == 0 {
			continue
		}
		var walls, bytes, chunk []float64
		for _, s := range r.samples {
			walls = append(walls, s.wall.Seconds())
			bytes = append(bytes, float64(s.viewerB)/float64(rep.size))
			chunk = append(chunk, float64(s.viewerB)/float64(max(s.chunks, 1)))
		}
		wall := median(walls)
		cell := func(get func(cpuUse) time.Duration) string {
			var xs []float64
			for _, s := range r.samples {
				if d := get(s.cpu); d >= 0 {
					xs = append(xs, d.Seconds())
				}
			}
			if len(xs) == 0 {
				return "–"
			}
			m := median(xs)
			return fmt.Sprintf("%.2f s (%.0f%%)", m, 100*m/wall)
		}
		rows = append(rows, []string{
			r.c.name, fmt.Sprintf("%.2f s", wall),
			cell(func(u cpuUse) time.Duration { return u.child }),
			cell(func(u cpuUse) time.Duration { return u.owner }),
			cell(func(u cpuUse) time.Duration { return u.server }),
			cell(func(u cpuUse) time.Duration { return u.viewer }),
			cell(func(u cpuUse) time.Duration { return u.bench }),
			cell(func(u cpuUse) time.Duration { return u.kernel }),
			cell(func(u cpuUse) time.Duration { return u.all }),
			fmt.Sprintf("%.3f×", median(bytes)),
			fmt.Sprintf("%.0f B", median(chunk)),
		})
	}
	return rows
}

var (
	throughputHead = []string{"contender", "median MB/s", "min–max MB/s", "ratio to raw pty", "runs", "bytes at viewer / file (median)", "resyncs per run (median)", "goal"}
	cpuHead        = []string{"contender", "wall", "cat", "pty owner (holder / tmux server)", "termkeep server", "viewer process", "bench (reading the viewer)", "kernel workers", "all CPUs (other load too)", "bytes at viewer / file", "mean read at viewer"}
)

// idleLines states the idle-memory figures as sentences (both renderings).
func (rep *report) idleLines() []string {
	id := rep.idle
	if id.err != nil {
		return []string{"Idle holder memory: unavailable (" + id.err.Error() + ")."}
	}
	var pss, priv, rss []float64
	for _, m := range id.holders {
		pss = append(pss, float64(m.Pss))
		priv = append(priv, float64(m.Private))
		rss = append(rss, float64(m.Rss))
	}
	mp := median(priv)
	verdict := "meets"
	if mp > privateGoalKiB {
		verdict = "does NOT meet"
	}
	return []string{
		fmt.Sprintf("Idle holders (%d sessions running `sleep 3600`, read after %v): "+
			"Private (Private_Clean+Private_Dirty) median %.0f KiB (%.0f–%.0f), "+
			"Pss median %.0f KiB (%.0f–%.0f), Rss median %.0f KiB.",
			len(id.holders), idleSettle, mp, priv[0], priv[len(priv)-1], median(pss), pss[0], pss[len(pss)-1], median(rss)),
		fmt.Sprintf("The goal, an idle holder's private memory ≤ 1 MiB (%d KiB): the median holder %s it.", privateGoalKiB, verdict),
		fmt.Sprintf("Server hosting those %d sessions: Pss %d KiB, Private %d KiB, Rss %d KiB.",
			len(id.holders), id.server.Pss, id.server.Private, id.server.Rss),
	}
}

func (rep *report) summary() string {
	return fmt.Sprintf("%d MiB file, %d rounds, %dx%d terminal; sections %s; %d CPUs, kernel %s, %s, %s",
		rep.cfg.mib, rep.cfg.rounds, termCols, termRows, rep.sectionsRun(), rep.machine.nproc, rep.machine.kernel, rep.machine.goVer, rep.machine.tmux)
}

// textSkipped writes a text section's lines for a run skipped (why) or
// failed (err), if either.
func textSkipped(b *strings.Builder, why string, err error) {
	if why != "" {
		b.WriteString("skipped: " + why + "\n")
	}
	if err != nil {
		b.WriteString("unavailable: " + err.Error() + "\n")
	}
}

// mdSkipped is textSkipped for docs/PERFORMANCE.md.
func mdSkipped(b *strings.Builder, why string, err error) {
	if why != "" {
		b.WriteString("Skipped: " + why + "\n\n")
	}
	if err != nil {
		b.WriteString("Unavailable: " + err.Error() + "\n\n")
	}
}

func textTable(b *strings.Builder, head []string, rows [][]string) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, row := range append([][]string{head}, rows...) {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

func (rep *report) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\ntermkeep bench: %s\n", rep.summary())
	if len(rep.results) > 0 {
		b.WriteString("\nOutput throughput:\n")
		textTable(&b, throughputHead, rep.throughputRows())
		b.WriteString("\nCPU per run, median (share of the run's wall time):\n")
		textTable(&b, cpuHead, rep.cpuRows())
		b.WriteString(rep.skipNote())
		b.WriteString(rep.gapNote())
	}
	if len(rep.fan) > 0 {
		b.WriteString("\nFan-out to WebSocket viewers (time until every viewer has the end marker):\n")
		textTable(&b, fanHead, rep.fanRows())
		b.WriteString("\nA stalled viewer:\n")
		textTable(&b, stallHead, rep.stallRows())
		b.WriteString(rep.stallVerdict() + "\n")
	}
	rep.attachFanText(&b)
	if len(rep.lat) > 0 {
		fmt.Fprintf(&b, "\nKeystroke echo latency (%d keys per round, median over rounds):\n", rep.cfg.keys)
		textTable(&b, latHead, rep.latRows())
	}
	if len(rep.latRepro) > 0 {
		b.WriteString("\nEcho through a shell's cat at 120×40 (echo-repro, median over rounds):\n")
		textTable(&b, latHead, rep.reproRows())
	}
	if rep.screen != nil {
		b.WriteString("\nScreen model: " + rep.screen.command + "\n")
		textSkipped(&b, "", rep.screen.err)
		if rep.screen.err == nil {
			textTable(&b, screenHead, rep.screenRows())
		}
		for _, l := range rep.screen.memLines {
			b.WriteString("memory: " + l + "\n")
		}
		if rep.screen.memNote != "" {
			b.WriteString("memory: " + rep.screen.memNote + "\n")
		}
	}
	if slices.Contains(rep.ran, "memory") {
		b.WriteString("\n")
		for _, l := range rep.idleLines() {
			b.WriteString(l + "\n")
		}
	}
	rep.sessionsText(&b)
	rep.predictText(&b)
	rep.sshEchoText(&b)
	rep.goalsText(&b)
	if f := rep.failures(); len(f) > 0 {
		b.WriteString("\nFailed runs:\n")
		for _, l := range f {
			b.WriteString("  " + l + "\n")
		}
	}
	fmt.Fprintf(&b, "\nTook %v.\n", rep.took.Round(time.Second))
	return b.String()
}

// skipNote says which termkeep viewers were skipped past part of the
// output (resyncs): their MB/s is how soon the end reached them, not the
// pace at which they received every byte, so it does not compare with a
// contender that received the whole file.
func (rep *report) skipNote() string {
	var parts []string
	for _, r := range rep.results {
		if len(r.samples) == 0 || !r.samples[0].termkeep {
			continue
		}
		b := medianOf(r.samples, func(s sample) float64 { return float64(s.viewerB) / float64(rep.size) })
		if b < 0.99 {
			parts = append(parts, fmt.Sprintf("%s received %.2f× of the file (median %.0f resyncs per run)", r.c.name, b,
				medianOf(r.samples, func(s sample) float64 { return float64(s.resyncs) })))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "\nNote: " + strings.Join(parts, "; ") + ". Their MB/s is how soon the file's end reached them, " +
		"not a pace at which they received every byte; it does not compare with a contender that received the whole file.\n"
}

// gapNote warns when a wire viewer was told output was skipped: its
// throughput then covers fewer bytes than the file.
func (rep *report) gapNote() string {
	for _, r := range rep.results {
		for _, s := range r.samples {
			if s.gaps > 0 {
				return fmt.Sprintf("\nNote: %s received Gap frames (output dropped by log retention before it was read) in some runs.\n", r.c.name)
			}
		}
	}
	return ""
}

func mdTable(b *strings.Builder, head []string, rows [][]string) {
	fmt.Fprintf(b, "| %s |\n", strings.Join(head, " | "))
	fmt.Fprintf(b, "|%s\n", strings.Repeat("---|", len(head)))
	for _, r := range rows {
		fmt.Fprintf(b, "| %s |\n", strings.Join(r, " | "))
	}
}

// command is how this report was produced, as a reader would retype it.
func (rep *report) command() string {
	if strings.Join(rep.cfg.args, " ") == "-bin bin -out docs/PERFORMANCE.md" {
		return "make bench"
	}
	return "go run ./bench " + strings.Join(rep.cfg.args, " ")
}

func (rep *report) markdown() string {
	var b strings.Builder
	m := rep.machine
	b.WriteString("# termkeep performance\n\n")
	b.WriteString("Measured figures and the command that produced them. This file is written\n")
	b.WriteString("by `make bench` (the program in `bench/`); edit the program, not the file.\n")
	fmt.Fprintf(&b, "`make bench-quick` runs a smaller check (%d MiB, %d rounds, %d keys, Go benchmarks\n", quickMiB, quickRounds, quickKeys)
	fmt.Fprintf(&b, "for %s; reattach at %d MiB of history, a restart of %d sessions of %d MiB, memory at %d and %d sessions, %d scale sessions for %d s)\n",
		quickBenchtime, quickReattachMiB, quickRestartSessions, quickRestartMiB, quickMemSessions, quickMemSessionsMany, quickScaleSessions, quickScaleSeconds)
	b.WriteString("and only prints. `-only SECTION` runs one section (see each section's command).\n\n")

	fmt.Fprintf(&b, "- Command: `%s` (took %v)\n", rep.command(), rep.took.Round(time.Second))
	fmt.Fprintf(&b, "- Date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	cpu := ""
	if m.cpu != "" {
		cpu = " (" + m.cpu + ")"
	}
	fmt.Fprintf(&b, "- Machine: %d CPUs%s, shared; Linux kernel %s; %s; %s\n", m.nproc, cpu, m.kernel, m.goVer, m.tmux)
	fmt.Fprintf(&b, "- Sections: %s; %d rounds each, the contenders of a section interleaved round by round\n", rep.sectionsRun(), rep.cfg.rounds)
	b.WriteString("\nEvery termkeep figure uses a fresh server and state directory per run, with\n")
	b.WriteString("the server's defaults (log retention 64 MiB, log fsync at most once a second,\n")
	b.WriteString("viewer queue 1 MiB) and its browser listener on a free port of 127.0.0.1.\n")

	if len(rep.results) > 0 {
		b.WriteString("\n## Output throughput\n\n")
		fmt.Fprintf(&b, "Workload: %d MiB (%d bytes) of text lines shaped like a build log, printed by `cat` into a %d×%d terminal.\n",
			rep.cfg.mib, rep.size, termCols, termRows)
		b.WriteString("Each run is timed from the keystroke that starts `cat` (the session waits\n")
		b.WriteString("for it, so start-up and attach are not counted) until the file's last line, a\n")
		b.WriteString("unique marker, reaches the viewer. MB/s is 10⁶ bytes of the file per second;\n")
		b.WriteString("the ratio is the contender's median over the raw pty's median.\n\n")
		mdTable(&b, throughputHead, rep.throughputRows())
		b.WriteString("\n")
		for _, r := range rep.results {
			fmt.Fprintf(&b, "- **%s**: %s.\n", r.c.name, r.c.note)
		}
		b.WriteString("\ntmux renders: its viewer receives redraws of the screen, not the child's\n")
		b.WriteString("bytes, and may skip output it no longer needs to draw. termkeep sends every\n")
		b.WriteString("byte to a viewer that keeps up; one that falls more than the viewer queue\n")
		b.WriteString("behind is skipped to the present with a snapshot (a resync; see the last two\n")
		b.WriteString("columns, and the bytes column below).\n")
		b.WriteString(rep.skipNote())
		b.WriteString(rep.gapNote())

		b.WriteString("\n### Where the CPU goes\n\n")
		b.WriteString("CPU time per run by process, median over the rounds, with its share of the\n")
		b.WriteString("median run's wall time (100% is one of the cores kept busy for the whole run).\n")
		b.WriteString("Sampled from /proc just before the go keystroke and just after the end marker.\n")
		b.WriteString("\"cat\" is the child's reaped-children time; \"kernel workers\" is every kworker\n")
		b.WriteString("thread, which is where the kernel moves pty data from the writing side to the\n")
		b.WriteString("reading side; \"all CPUs\" is the whole machine, other tenants' load included.\n")
		b.WriteString("A tmux client hands its terminal to the tmux server, which writes to it\n")
		b.WriteString("directly: hence a viewer process that uses no CPU.\n\n")
		mdTable(&b, cpuHead, rep.cpuRows())
		b.WriteString("\nBefore (make bench, 2026-11-21 23:33 UTC): the termkeep server took 2.75 s per\n")
		b.WriteString("attach run and 2.46 s per wire client run. A screen model behind the in-memory\n")
		b.WriteString("window scanned its log segment from the start for size changes at every read\n")
		b.WriteString("(a fifth of the server's CPU here), each replay checkpoint was decoded and\n")
		b.WriteString("encoded again to trim it, and the model compressed every history chunk (see\n")
		b.WriteString("Screen model). With the server no longer the slowest stage, the attach\n")
		b.WriteString("viewer's terminal is: a second pty read as fast as the bench can is slower than\n")
		b.WriteString("cat, so that viewer may now fall a viewer queue behind and be resynced, as the\n")
		b.WriteString("design has it for any viewer slower than the program (tmux skips far more).\n")
	}

	if len(rep.fan) > 0 {
		b.WriteString("\n## Fan-out to WebSocket viewers\n\n")
		for _, l := range rep.fanMethod() {
			b.WriteString(l + "\n\n")
		}
		mdTable(&b, fanHead, rep.fanRows())

		b.WriteString("\n### A stalled viewer\n\n")
		for _, l := range rep.stallMethod() {
			b.WriteString(l + "\n\n")
		}
		mdTable(&b, stallHead, rep.stallRows())
		b.WriteString("\n" + rep.stallVerdict() + "\n")
	}
	rep.attachFanMarkdown(&b)

	if len(rep.lat) > 0 {
		b.WriteString("\n## Keystroke echo latency\n\n")
		for _, l := range rep.latMethod() {
			b.WriteString(l + "\n\n")
		}
		mdTable(&b, latHead, rep.latRows())
		b.WriteString("\n")
		for _, r := range rep.lat {
			fmt.Fprintf(&b, "- **%s**: %s.\n", r.c.name, r.c.note)
		}
		b.WriteString("\nBefore (make bench, 2026-11-22 01:48 UTC): p50 360 µs through termkeep attach,\n")
		b.WriteString("267 µs through a WebSocket, 216 µs through the wire client. The server's sockets,\n")
		b.WriteString("and termkeep attach's socket and terminal, were read and written with ordinary\n")
		b.WriteString("system calls, and the first one after the process had been idle woke the Go\n")
		b.WriteString("runtime's monitor thread: per key, 43 context switches on the machine through\n")
		b.WriteString("termkeep attach (now 34) and 25 through the wire client (now 22), counted with\n")
		b.WriteString("`perf stat -a -e context-switches` over this section. They are raw calls now\n")
		b.WriteString("that wait in the runtime's poller (internal/rawio), as the holder's were.\n")
		b.WriteString("\nWhy the goals are still missed: an echo is a chain of wake-ups of sleeping\n")
		b.WriteString("processes, and here a woken process starts running 25-40 µs later on average\n")
		b.WriteString("(`perf sched latency` over this section). Through termkeep attach a key wakes\n")
		b.WriteString("attach, the server, the holder, the server and attach again; through tmux, its\n")
		b.WriteString("client and its server twice (tmux's server writes to the client's terminal\n")
		b.WriteString("itself). Through a WebSocket it wakes the server, the holder and the server\n")
		b.WriteString("again, where ttyd has no holder. The holder, a process of its own so that the\n")
		b.WriteString("session outlives the server, is the hop the others lack; it looks for the echo\n")
		b.WriteString("for 200 µs instead of sleeping, as long as its looks find echoes (on a busy\n")
		b.WriteString("machine they did not, and cost each key 200 µs). Fewer wake-ups would take more of\n")
		b.WriteString("that (each process spinning a core for every key typed), or termkeep attach\n")
		b.WriteString("speaking to the holder directly, past the server's arbitration of terminal\n")
		b.WriteString("answers, its input limits and its size policy. The WebSocket goal was set from\n")
		b.WriteString("ttyd's 92 µs on a machine whose raw pty echoed in 27 µs; the raw pty here takes\n")
		b.WriteString("about twice that (see the table).\n")
	}

	if len(rep.latRepro) > 0 {
		b.WriteString("\n## Echo through a shell's cat at 120×40\n\n")
		for _, l := range rep.reproMethod() {
			b.WriteString(l + "\n\n")
		}
		mdTable(&b, latHead, rep.reproRows())
		b.WriteString("\n")
		for _, r := range rep.latRepro {
			fmt.Fprintf(&b, "- **%s**: %s.\n", r.c.name, r.c.note)
		}
	}
	if rep.screen != nil {
		b.WriteString("\n## Screen model\n\n")
		b.WriteString("The server keeps a model of every session's screen (internal/screen) for\n")
		b.WriteString("snapshots; it parses all of a session's output. The package's own Go\n")
		b.WriteString("benchmarks, run from the repository's root with\n\n")
		fmt.Fprintf(&b, "    %s\n\n", rep.screen.command)
		b.WriteString("MB/s is output consumed per second (benchmarks that set bytes); every\n")
		b.WriteString("BenchmarkScreen* line the command printed is listed.\n\n")
		if rep.screen.err != nil {
			b.WriteString("Unavailable: " + rep.screen.err.Error() + "\n")
		} else {
			mdTable(&b, screenHead, rep.screenRows())
		}
		b.WriteString("\nBefore (make bench, 2026-11-21 23:33 UTC): ScreenPlainText80x24 154.3 MB/s,\n")
		b.WriteString("ScreenPlainText200x50 136.4 MB/s, 17 allocations a run. A quarter of that time\n")
		b.WriteString("compressed history chunks that a flood drops soon after (they now wait raw, up\n")
		b.WriteString("to 1 MiB, until the session's model compacts them: once a second while output\n")
		b.WriteString("flows, once when it stops), a quarter found each row's trailing blanks (now 32\n")
		b.WriteString("cells a compare), and packing ASCII cells appended a byte at a time.\n")
		b.WriteString("\nThen (2026-11-22), the package's test binaries of the two versions run in turn\n")
		b.WriteString("seven times each (400 runs of ScreenPlainText, CPU time of the process, median):\n")
		b.WriteString("200x50 2.13 s before, 1.60 s after; 80x24 1.94 s before, 1.71 s after. A row\n")
		b.WriteString("that plain output scrolls through now knows where its blank cells start\n")
		b.WriteString("(scrolling blanks it, printing raises the mark; any other write of cells makes\n")
		b.WriteString("every mark unknown), so packing it no longer scans 150 blank cells of a 200-wide\n")
		b.WriteString("row; a run of one style is found while its cells are packed, in one pass. A\n")
		b.WriteString("checkpoint (every 4 MiB of output) is encoded into one buffer sized for it,\n")
		b.WriteString("instead of growing to a megabyte by doubling and being copied into a second one.\n")
		b.WriteString("In the attach throughput run the server's CPU went from 2.09 s to 1.60 s\n")
		b.WriteString("(median of four A/B pairs, 256 MiB).\n")
		b.WriteString("\nMemory per session, as the package's memory test logs it (`" + rep.screen.memCommand + "`):\n\n")
		for _, l := range rep.screen.memLines {
			b.WriteString("- " + l + "\n")
		}
		if rep.screen.memNote != "" {
			b.WriteString("- " + rep.screen.memNote + "\n")
		}
	}

	if slices.Contains(rep.ran, "memory") {
		b.WriteString("\n## Idle holder memory\n\n")
		for _, l := range rep.idleLines() {
			b.WriteString("- " + l + "\n")
		}
		b.WriteString("\nFigures from /proc/<pid>/smaps_rollup (holder pid from the session's meta.json).\n")
		b.WriteString("Private is what each additional session costs; Pss also counts a share of the\n")
		b.WriteString("holder binary's pages, which all holders share.\n")
	}

	rep.sessionsMarkdown(&b)
	rep.predictMarkdown(&b)
	rep.sshEchoMarkdown(&b)
	rep.goalsMarkdown(&b)

	if f := rep.failures(); len(f) > 0 {
		b.WriteString("\n## Failed runs\n\n")
		for _, l := range f {
			b.WriteString("- " + l + "\n")
		}
	}
	return b.String()
}
