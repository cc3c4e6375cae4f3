package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The reattach, restart, memory-at-100-sessions and scale sections of the
// report, rendered like the others: cells built once, shown as plain text
// and as Markdown.

// verdict says whether a figure meets its goal.
func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	case d < 100*time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	default:
		return fmt.Sprintf("%.1f min", d.Minutes())
	}
}

// durStats is the median, min and max of ds.
func durStats(ds []time.Duration) (med, lo, hi time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0, 0, 0
	}
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}

// onlyCommand is how to run one section alone, as in quick mode or full.
func (rep *report) onlyCommand(section string) string {
	q := ""
	if rep.cfg.quick {
		q = " -quick"
	}
	return fmt.Sprintf("go run ./bench -bin bin%s -only %s", q, section)
}

// ---- reattach ----

var reattachHead = []string{"viewer", "history", "median", "min–max", "ratio to tmux attach", "runs", "goal ≤ 50 ms"}

func (rep *report) reattachRows() [][]string {
	r := rep.reattach
	tmux := map[int]time.Duration{}
	for _, x := range r.results {
		if x.c.name == "tmux attach" && len(x.samples) > 0 {
			tmux[x.h.mib], _, _ = durStats(x.samples)
		}
	}
	var rows [][]string
	for _, x := range r.results {
		hist := fmt.Sprintf("%d MiB", x.h.mib)
		runs := fmt.Sprintf("%d/%d", len(x.samples), len(x.samples)+len(x.errs))
		switch {
		case x.skipped != "":
			rows = append(rows, []string{x.c.name, hist, "skipped: " + x.skipped, "", "", "", ""})
			continue
		case len(x.samples) == 0:
			rows = append(rows, []string{x.c.name, hist, "failed", "", "", runs, ""})
			continue
		}
		med, lo, hi := durStats(x.samples)
		ratio := "–"
		if t := tmux[x.h.mib]; t > 0 {
			ratio = fmt.Sprintf("%.2f", float64(med)/float64(t))
		}
		goal := "–"
		if strings.HasPrefix(x.c.name, "termkeep") {
			goal = verdict(med <= reattachGoal && len(x.errs) == 0)
		}
		rows = append(rows, []string{x.c.name, hist, fmtDur(med), fmtDur(lo) + "–" + fmtDur(hi), ratio, runs, goal})
	}
	return rows
}

func (rep *report) reattachMethod() []string {
	r := rep.reattach
	tries := rep.cfg.reattachTries
	return []string{
		fmt.Sprintf("One termkeep server and one tmux server (status line off) each hold a session that printed the "+
			"throughput workload of %d MiB with `cat` and then sits idle (`exec sleep`), and one that printed %d MiB, "+
			"in a %d×%d terminal. Printing all of it took %s (not timed). A fresh viewer then connects and is timed from "+
			"its connect (or, for the two attach commands, the start of the process) until its output holds the first "+
			"line of the final screen and, after it, the end marker, the file's last line; %d viewers of each kind and "+
			"history, interleaved. After each timed attach the bench reads on until the viewer is quiet for %v and draws "+
			"what it received on an empty %d×%d screen model (internal/screen): it must show exactly the file's last "+
			"lines, else the run counts as failed.",
			rep.cfg.reattachMiB, reattachSmallMiB, termCols, termRows, fmtDur(r.produce), tries, reattachQuiet, termCols, termRows),
		fmt.Sprintf("The server keeps at most its log retention (64 MiB) of a session's output on disk; the screen model "+
			"has seen every byte. Run alone: `%s` (`-reattach-size N` for another history).", rep.onlyCommand("reattach")),
	}
}

// ---- restart ----

var restartHead = []string{"sessions", "output each", "SIGTERM → old server gone", "new server answers", "all listed running",
	"all screens right: median", "min–max", "restarts", "screen mismatches (total)", "first answers not yet right (total)", "holders lost", "goal ≤ 1 s"}

func (rep *report) restartRows() [][]string {
	r := rep.restart
	runs := fmt.Sprintf("%d/%d", len(r.samples), len(r.samples)+len(r.errs))
	out := fmt.Sprintf("%d MiB", r.mib)
	if len(r.samples) == 0 {
		return [][]string{{fmt.Sprint(r.sessions), out, "failed", "", "", "", "", runs, "", "", "", ""}}
	}
	get := func(f func(restartSample) time.Duration) []time.Duration {
		var ds []time.Duration
		for _, s := range r.samples {
			ds = append(ds, f(s))
		}
		return ds
	}
	stop, _, _ := durStats(get(func(s restartSample) time.Duration { return s.stop }))
	health, _, _ := durStats(get(func(s restartSample) time.Duration { return s.health }))
	listed, _, _ := durStats(get(func(s restartSample) time.Duration { return s.listed }))
	live, lo, hi := durStats(get(func(s restartSample) time.Duration { return s.live }))
	var mism, retried, lost int
	for _, s := range r.samples {
		mism += s.mismatches
		retried += s.firstWrong
		lost += s.holdersOut
	}
	return [][]string{{
		fmt.Sprint(r.sessions), out, fmtDur(stop), fmtDur(health), fmtDur(listed), fmtDur(live), fmtDur(lo) + "–" + fmtDur(hi),
		runs, fmt.Sprint(mism), fmt.Sprint(retried), fmt.Sprint(lost), verdict(live <= restartGoal && mism == 0 && len(r.errs) == 0),
	}}
}

func (rep *report) restartMethod() []string {
	r := rep.restart
	return []string{
		fmt.Sprintf("%d sessions in one server each print the same %d MiB workload file with `cat` (%d sessions × %d MiB = %.1f GiB "+
			"through the ptys, %s in all; not timed), then a line of their own, then sit idle (`exec sleep`); their logs "+
			"held %.0f MiB on disk. Every session's screen, with %d lines of scrollback above it, is taken from "+
			"`GET /v1/sessions/{id}/screen`. Then, for each of %d restarts: the server gets SIGTERM (its holders and their children keep running) "+
			"and, once it has exited, a new `termkeep serve` starts in the same state directory. The clock starts at the new "+
			"server's exec; \"answers\" is its first `GET /v1/health`, \"listed\" the first `GET /v1/sessions` with every session "+
			"running, and \"all screens right\" the moment the last session's screen (requested %d at a time, each again every "+
			"5 ms until right, for at most 30 s) equals the one taken before the first restart.",
			r.sessions, r.mib, r.sessions, r.mib, float64(r.sessions)*float64(r.size)/(1<<30), fmtDur(r.produce),
			float64(r.logBytes)/(1<<20), restartScrollback, rep.cfg.restartRounds, restartParallel),
		fmt.Sprintf("The restart goal is 100 sessions of 64 MiB logs; the full run uses %d MiB per session to stay within its "+
			"time (64 MiB each is %.1f GiB through the ptys: %s at the rate this run printed). A restarted server reads "+
			"each session's screen checkpoint (written at the SIGTERM, and every 4 MiB of output) and the log's last segment "+
			"(4 MiB at the default retention), so a log past a few MiB does not add to the work; `-restart-size 64` measures "+
			"that size. \"Mismatches\" are sessions whose screen was never right within 30 s; \"first answers not yet "+
			"right\" are sessions whose first answered screen differed (or was refused) and a later one was right. Run alone: `%s`.",
			fullRestartMiB, 100*64.0/1024, r.at64(), rep.onlyCommand("restart")),
	}
}

// at64 is how long 100 sessions of 64 MiB would take to print at the rate
// this run's sessions printed.
func (r *restartReport) at64() string {
	if r.produce <= 0 || r.size <= 0 {
		return "unknown"
	}
	rate := float64(r.sessions) * float64(r.size) / r.produce.Seconds()
	return "about " + fmtDur(time.Duration(100*64*(1<<20)/rate*1e9))
}

// ---- memory per session ----

var memHead = []string{"contender", "case", "sessions", "PSS per session (median)", "min–max over rounds", "Private per session (median)", "termkeep: server's share / holder", "rounds", "goal"}

func (rep *report) memRows() [][]string {
	var rows [][]string
	for _, r := range rep.mem100.results {
		n := rep.mem100.sessions
		if r.c.many {
			n = rep.mem100.many
		}
		runs := fmt.Sprintf("%d/%d", len(r.samples), len(r.samples)+len(r.errs))
		switch {
		case r.skipped != "":
			rows = append(rows, []string{r.contender, r.c.name, fmt.Sprint(n), "skipped: " + r.skipped, "", "", "", "", ""})
			continue
		case len(r.samples) == 0:
			rows = append(rows, []string{r.contender, r.c.name, fmt.Sprint(n), "failed", "", "", "", runs, ""})
			continue
		}
		var pss []float64
		for _, s := range r.samples {
			pss = append(pss, s.perPss)
		}
		med := median(pss)
		priv := medianOf(r.samples, func(f memFigure) float64 { return f.perPrivate })
		goal, parts := "–", "–"
		if r.contender == "termkeep" {
			share := medianOf(r.samples, func(f memFigure) float64 { return f.serverShare })
			holder := medianOf(r.samples, func(f memFigure) float64 { return f.holder })
			parts = fmtKiB(share) + " / " + fmtKiB(holder)
			switch {
			case r.c.scroll:
				goal = fmt.Sprintf("≤ %d MiB: %s", memGoalFullKiB/1024, verdict(med <= memGoalFullKiB))
			case !r.c.busy:
				goal = fmt.Sprintf("≤ %d KiB: %s", memGoalKiB, verdict(med <= memGoalKiB))
				if !r.c.many {
					goal += fmt.Sprintf("; server's share ≤ %d KiB: %s", memGoalShareKiB, verdict(share <= memGoalShareKiB))
				}
			}
		}
		rows = append(rows, []string{r.contender, r.c.name, fmt.Sprint(n), fmtKiB(med), fmtKiB(pss[0]) + "–" + fmtKiB(pss[len(pss)-1]), fmtKiB(priv), parts, runs, goal})
	}
	return rows
}

func fmtKiB(k float64) string { return fmt.Sprintf("%.0f KiB", k) }

func (rep *report) memMethod() []string {
	m := rep.mem100
	return []string{
		fmt.Sprintf("Each contender hosts N sessions (%d, or %d in the last case) whose child is an interactive `sh` at its prompt, in a fresh server (tmux: "+
			"one server, N sessions of %d×%d, no client attached; dtach: N `dtach -n` masters). Figures are PSS from "+
			"/proc/<pid>/smaps_rollup, read %v after the last contender's sessions are up (the three contenders of a case "+
			"run side by side, then end); the `sh` children are left out, since they are the same everywhere. "+
			"termkeep: (the server's PSS + every holder's PSS) / N, everything termkeep costs, its fixed part included; "+
			"the server's share is its PSS / N, and the holder figure the mean holder's PSS (the bench's log also gives the marginal "+
			"figure: the server's growth from its PSS with no session, read %v after it started, / N, plus the median holder). "+
			"tmux: the server's PSS / N. dtach: the median master's PSS. Private is the same sum over Private_Clean + Private_Dirty.",
			m.sessions, m.many, termCols, termRows, memSettle, memSettleBefore),
		fmt.Sprintf("\"full scrollback\": each session first prints %s lines of the throughput workload (`cat`, then `exec sh`), "+
			"so termkeep's screen model holds its default 10,000 lines of scrollback; tmux keeps its default history-limit "+
			"(2,000 lines) of them, dtach keeps nothing (it has no screen). The bench waits until every termkeep screen and "+
			"every tmux pane has the whole file before the settle time. A quiet session's server keeps only the last 64 KiB of its "+
			"recent output in memory after 5 s, and an idle server hands what that frees back to the system (one collection a "+
			"second after a wave of trims). \"busy\": each session prints a numbered line every 50 ms (`sh` in a loop) "+
			"while it is measured. Rounds: %d, the cases interleaved. "+
			"Run alone: `%s`.", fmt.Sprintf("%d,%03d", memScrollLines/1000, memScrollLines%1000), rep.cfg.memRounds, rep.onlyCommand("memory100")),
	}
}

// ---- scale ----

var scaleHead = []string{"measure", "figure", "goal"}

func (rep *report) scaleRows() [][]string {
	s := rep.scale
	pct := func(d time.Duration) string {
		if d < 0 || s.window <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.0f%% of a core (%.1f s over %.1f s)", 100*d.Seconds()/s.window, d.Seconds(), s.window)
	}
	rows := [][]string{
		{"sessions, one wire viewer each", fmt.Sprintf("%d (%d viewers reached the session's end)", s.sessions, s.viewers), "all: " + verdict(s.viewers == s.sessions)},
		{"viewers the server dropped as silent (its log: \"" + droppedMsg + "\")", fmt.Sprint(s.dropped), "0: " + verdict(s.dropped == 0)},
		{"lines per session", fmt.Sprintf("%d (%d a second for %d s)", s.lines, scaleRate, s.seconds), ""},
		{"setup: create the sessions and attach the viewers", fmtDur(s.setup), ""},
		{"lines written", fmt.Sprintf("%d of %d scheduled; the writer at its latest %s behind its schedule (not in the delays)",
			s.written, int64(s.sessions)*int64(s.lines), fmtDur(s.writerLate)), ""},
	}
	if len(s.serverPct) > 0 {
		p := slices.Clone(s.serverPct)
		slices.Sort(p)
		rows = append(rows, []string{"termkeep server CPU", pct(s.cpu.server) +
			fmt.Sprintf("; per second: median %.0f%%, %.0f–%.0f%%", median(slices.Clone(p)), p[0], p[len(p)-1]), ""})
	} else {
		rows = append(rows, []string{"termkeep server CPU", pct(s.cpu.server), ""})
	}
	rows = append(rows,
		[]string{"holders' CPU, all together", pct(s.cpu.owner), ""},
		[]string{"children (the cat relays) CPU, all together", pct(s.cpu.child), ""},
		[]string{"bench (the viewers) CPU", pct(s.cpu.bench), ""},
		[]string{"all CPUs (other load too)", pct(s.cpu.all), ""},
		[]string{"CPU per line written (the window's share of the lines)", s.perLine(), ""},
		[]string{fmt.Sprintf("lines lost (written, never received, or not within %v of the schedule's end)", scaleDrain), fmt.Sprint(s.lostLines), "0: " + verdict(s.lostLines == 0)},
		[]string{"bytes lost (offset holes, short of the Exit frame's end)", fmt.Sprint(s.lostBytes), "0: " + verdict(s.lostBytes == 0)},
		[]string{"lines out of order or twice; snapshots; gap frames", fmt.Sprintf("%d; %d; %d", s.disorder, s.snapshots, s.gapFrames), "0: " + verdict(s.disorder == 0 && s.snapshots == 0 && s.gapFrames == 0)},
	)
	if len(s.delays) > 0 {
		rows = append(rows,
			[]string{"delay printed → received, every line", fmt.Sprintf("p50 %s, p99 %s, max %s (%d lines)",
				fmtDur(rank(s.delays, 0.5)), fmtDur(rank(s.delays, 0.99)), fmtDur(s.delays[len(s.delays)-1]), len(s.delays)), ""},
			[]string{"each viewer's p99 delay", fmt.Sprintf("median %s, %s–%s",
				fmtDur(time.Duration(median(slices.Clone(s.viewerP99))*1e9)), fmtDur(time.Duration(s.viewerP99[0]*1e9)),
				fmtDur(time.Duration(s.viewerP99[len(s.viewerP99)-1]*1e9))), ""},
		)
	}
	return rows
}

// perLine is each process's CPU per line written during the CPU window,
// the figure that says how many lines a core carries.
func (s *scaleReport) perLine() string {
	if s.written == 0 || s.window <= 0 || s.seconds <= 0 {
		return "–"
	}
	lines := float64(s.written) * min(s.window/float64(s.seconds), 1)
	f := func(d time.Duration) string {
		if d < 0 {
			return "–"
		}
		return fmt.Sprintf("%.0f µs", d.Seconds()/lines*1e6)
	}
	return fmt.Sprintf("server %s, holders %s, cat %s, bench %s", f(s.cpu.server), f(s.cpu.owner), f(s.cpu.child), f(s.cpu.bench))
}

func (rep *report) scaleMethod() []string {
	s := rep.scale
	return []string{
		fmt.Sprintf("One server, %d sessions; each session's child is `cat` of a named pipe, into which the bench writes "+
			"%d lines a second for %d s (`L <session> <n> <µs since the epoch>`, the time taken as the line is written), the "+
			"sessions' phases spread evenly over the period, then a last line with the count, and closes the pipe, so the session ends "+
			"(a writer that falls behind, on a machine with no CPU to spare, stops at the schedule's end: \"lines written\" says how many it managed). "+
			"(A child that paces itself, a bash loop or a Go or Perl program, costs 90–200 µs of CPU a line here; at this scale "+
			"that is both cores, and the bench would measure the children. cat's relay costs about 35 µs a line.) Every session "+
			"has one wire viewer (internal/client, Hello{From: 0}) in the bench process, attached before the first line, reading "+
			"every frame. A viewer checks the whole stream: each Output frame must start at the offset where the previous one "+
			"ended, the stream must reach the offset its Exit frame states, and the line numbers must run 0, 1, 2, … to the last; "+
			"a snapshot or a gap frame would mean skipped output. A line's delay is from the time written in it to the arrival of "+
			"the frame that completed it.", s.sessions, scaleRate, s.seconds),
		fmt.Sprintf("CPU is sampled from /proc at the first line and %v later (the printing window, less its last second, while every holder and child is alive): the server's, the sum "+
			"of every holder's, the bench's own and the whole machine's; the server's also second by second. One run (it is "+
			"long, and the per-second and per-viewer figures give the spread). Run alone: `%s` (`-scale-sessions N`, "+
			"`-scale-seconds N`).", time.Duration(s.seconds)*time.Second-scaleWindowShort, rep.onlyCommand("scale")),
	}
}

// ---- rendering ----

// sessionsText renders the four sections as plain text.
func (rep *report) sessionsText(b *strings.Builder) {
	if r := rep.reattach; r != nil {
		fmt.Fprintf(b, "\nReattach: a fresh viewer's correct screen (histories %d MiB and %d MiB):\n", reattachSmallMiB, rep.cfg.reattachMiB)
		textSkipped(b, "", r.err)
		if len(r.results) > 0 {
			textTable(b, reattachHead, rep.reattachRows())
		}
	}
	if r := rep.restart; r != nil {
		b.WriteString("\nServer restart (SIGTERM, new server; time until every session is live with its screen):\n")
		textSkipped(b, "", r.err)
		if r.err == nil {
			textTable(b, restartHead, rep.restartRows())
		}
	}
	if r := rep.mem100; r != nil {
		fmt.Fprintf(b, "\nMemory per session at %d and %d sessions:\n", r.sessions, r.many)
		textSkipped(b, "", r.err)
		if len(r.results) > 0 {
			textTable(b, memHead, rep.memRows())
		}
	}
	if r := rep.scale; r != nil {
		fmt.Fprintf(b, "\nScale: %d sessions printing %d lines a second for %d s, one viewer each:\n", r.sessions, scaleRate, r.seconds)
		textSkipped(b, "", r.err)
		if r.lines > 0 && (r.viewers > 0 || len(r.delays) > 0) {
			textTable(b, scaleHead, rep.scaleRows())
		}
	}
}

// sessionsMarkdown renders the four sections for docs/PERFORMANCE.md.
func (rep *report) sessionsMarkdown(b *strings.Builder) {
	para := func(ls []string) {
		for _, l := range ls {
			b.WriteString(l + "\n\n")
		}
	}
	if r := rep.reattach; r != nil {
		b.WriteString("\n## Reattach: a fresh viewer of a long session\n\n")
		if r.err != nil {
			b.WriteString("Unavailable: " + r.err.Error() + "\n\n")
		}
		if len(r.results) > 0 {
			para(rep.reattachMethod())
			mdTable(b, reattachHead, rep.reattachRows())
			b.WriteString("\n")
			for _, c := range reattachContenders() {
				fmt.Fprintf(b, "- **%s**: %s.\n", c.name, c.note)
			}
		}
	}
	if r := rep.restart; r != nil {
		fmt.Fprintf(b, "\n## Server restart with %d sessions\n\n", r.sessions)
		if r.err != nil {
			b.WriteString("Unavailable: " + r.err.Error() + "\n")
		} else {
			para(rep.restartMethod())
			mdTable(b, restartHead, rep.restartRows())
		}
	}
	if r := rep.mem100; r != nil {
		fmt.Fprintf(b, "\n## Memory per session at %d and %d sessions\n\n", r.sessions, r.many)
		if r.err != nil {
			b.WriteString("Unavailable: " + r.err.Error() + "\n\n")
		}
		if len(r.results) > 0 {
			para(rep.memMethod())
			mdTable(b, memHead, rep.memRows())
		}
	}
	if r := rep.scale; r != nil {
		fmt.Fprintf(b, "\n## Scale: %d busy sessions, one viewer each\n\n", r.sessions)
		if r.err != nil {
			b.WriteString("Unavailable: " + r.err.Error() + "\n\n")
		}
		if r.lines > 0 && (r.viewers > 0 || len(r.delays) > 0) {
			para(rep.scaleMethod())
			mdTable(b, scaleHead, rep.scaleRows())
			if len(r.viewerErrs) > 0 {
				fmt.Fprintf(b, "\n%d viewers reported an error; the first: %s\n", len(r.viewerErrs), r.viewerErrs[0])
			}
		}
	}
}

// sessionsFailed reports whether any of the four sections failed to give
// its figures.
func (rep *report) sessionsFailed() bool {
	if r := rep.reattach; r != nil {
		if r.err != nil {
			return true
		}
		for _, x := range r.results {
			if x.skipped == "" && len(x.samples) == 0 {
				return true
			}
		}
	}
	if r := rep.restart; r != nil && (r.err != nil || len(r.samples) == 0) {
		return true
	}
	if r := rep.mem100; r != nil {
		if r.err != nil {
			return true
		}
		for _, x := range r.results {
			if x.skipped == "" && len(x.samples) == 0 {
				return true
			}
		}
	}
	if r := rep.scale; r != nil && (r.err != nil || r.viewers == 0) {
		return true
	}
	return false
}

// sessionsFailures lists the errors of the four sections' failed runs.
func (rep *report) sessionsFailures() []string {
	var out []string
	if r := rep.reattach; r != nil {
		for _, x := range r.results {
			for _, e := range x.errs {
				out = append(out, fmt.Sprintf("reattach, %s, %d MiB: %s", x.c.name, x.h.mib, e))
			}
		}
	}
	if r := rep.restart; r != nil {
		for _, e := range r.errs {
			out = append(out, "restart: "+e)
		}
	}
	if r := rep.mem100; r != nil {
		for _, x := range r.results {
			for _, e := range x.errs {
				out = append(out, fmt.Sprintf("memory at %d sessions, %s, %s: %s", r.sessions, x.contender, x.c.name, e))
			}
		}
	}
	if r := rep.scale; r != nil {
		for i, e := range r.viewerErrs {
			if i == 5 {
				out = append(out, fmt.Sprintf("scale: … and %d more viewers", len(r.viewerErrs)-5))
				break
			}
			out = append(out, "scale: "+e)
		}
	}
	return out
}
