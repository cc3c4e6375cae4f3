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
// memory (DESIGN.md: under 1 MiB).
const privateGoalKiB = 1024

// report renders the figures as a plain table (stdout) and as Markdown
// (docs/PERFORMANCE.md). Both come from the same cells so they cannot
// disagree.
type report struct {
	cfg     config
	size    int64
	results []*result
	idle    idleResult
	took    time.Duration
	machine machine
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
			rows = append(rows, []string{r.c.name, "skipped: " + r.skipped, "", "", ""})
			continue
		case len(r.samples) == 0:
			rows = append(rows, []string{r.c.name, "failed", "", "", fmt.Sprintf("0/%d", len(r.errs))})
			continue
		}
		xs := r.rates(rep.size)
		med := median(xs)
		ratio := "–"
		if raw > 0 {
			ratio = fmt.Sprintf("%.2f", med/raw)
		}
		rows = append(rows, []string{
			r.c.name, fmt.Sprintf("%.1f", med), fmt.Sprintf("%.1f–%.1f", xs[0], xs[len(xs)-1]), ratio,
			fmt.Sprintf("%d/%d", len(r.samples), len(r.samples)+len(r.errs)),
		})
	}
	return rows
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
	throughputHead = []string{"contender", "median MB/s", "min–max MB/s", "ratio to raw pty", "runs"}
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
	return fmt.Sprintf("%d MiB file (%d bytes), %d rounds, %dx%d terminal; %d CPUs, kernel %s, %s, %s",
		rep.cfg.mib, rep.size, rep.cfg.rounds, termCols, termRows, rep.machine.nproc, rep.machine.kernel, rep.machine.goVer, rep.machine.tmux)
}

func (rep *report) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\ntermkeep bench: %s\n\n", rep.summary())
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, row := range append([][]string{throughputHead}, rep.throughputRows()...) {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	b.WriteString("\nCPU per run, median (share of the run's wall time):\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, row := range append([][]string{cpuHead}, rep.cpuRows()...) {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	b.WriteString(rep.gapNote())
	b.WriteString("\n")
	for _, l := range rep.idleLines() {
		b.WriteString(l + "\n")
	}
	return b.String()
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
	b.WriteString("`make bench-quick` runs a smaller check (32 MiB, 3 rounds) and only prints.\n\n")

	b.WriteString("## Output throughput\n\n")
	fmt.Fprintf(&b, "- Command: `%s` (took %v)\n", rep.command(), rep.took.Round(time.Second))
	fmt.Fprintf(&b, "- Date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	cpu := ""
	if m.cpu != "" {
		cpu = " (" + m.cpu + ")"
	}
	fmt.Fprintf(&b, "- Machine: %d CPUs%s, shared; Linux kernel %s; %s; %s\n", m.nproc, cpu, m.kernel, m.goVer, m.tmux)
	fmt.Fprintf(&b, "- Workload: %d MiB (%d bytes) of text lines shaped like a build log, printed by `cat` into a %d×%d terminal; %d rounds, the contenders interleaved in the order of the table\n\n",
		rep.cfg.mib, rep.size, termCols, termRows, rep.cfg.rounds)
	b.WriteString("Each run is timed from the keystroke that starts `cat` (the session waits\n")
	b.WriteString("for it, so start-up and attach are not counted) until the file's last line, a\n")
	b.WriteString("unique marker, reaches the viewer. MB/s is 10⁶ bytes of the file per second;\n")
	b.WriteString("the ratio is the contender's median over the raw pty's median.\n\n")
	mdTable(&b, throughputHead, rep.throughputRows())
	b.WriteString("\n")
	for _, r := range rep.results {
		fmt.Fprintf(&b, "- **%s**: %s.\n", r.c.name, r.c.note)
	}
	b.WriteString("\ntermkeep runs with its defaults (log retention 64 MiB, log fsync at most once\n")
	b.WriteString("a second), a fresh server and state directory per run. tmux renders: its viewer\n")
	b.WriteString("receives redraws of the screen, not the child's bytes, and may skip output it\n")
	b.WriteString("no longer needs to draw; termkeep delivers every byte (see the last column below).\n")
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

	b.WriteString("\n## Idle holder memory\n\n")
	for _, l := range rep.idleLines() {
		b.WriteString("- " + l + "\n")
	}
	b.WriteString("\nFigures from /proc/<pid>/smaps_rollup (holder pid from the session's meta.json).\n")
	b.WriteString("Private is what each additional session costs; Pss also counts a share of the\n")
	b.WriteString("holder binary's pages, which all holders share.\n")
	return b.String()
}
