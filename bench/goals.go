package main

import (
	"fmt"
	"strings"
	"time"
)

// The echo goals and the targets beside them, each decided from figures
// measured side by side in the same run, so a busy machine slows every
// contender alike.
const (
	wsEchoRaw       = 3.0                  // WebSocket echo p50 at most this × the raw pty's
	echoP999Max     = 2 * time.Millisecond // every path's p99.9
	reattachTmuxMax = 1.5                  // a fresh attach to a long history, × tmux's
	attachDtachMin  = 1.0                  // attach throughput, × dtach's
)

// goal is one goal or target with its verdict: met is nil when this run
// did not measure what it needs.
type goal struct {
	name   string
	figure string
	met    *bool
}

func decided(ok bool) *bool { return &ok }

func (g goal) cell() string {
	if g.met == nil {
		return "not measured"
	}
	return g.figure + ": " + verdict(*g.met)
}

func (g goal) line() string {
	v := "not measured"
	if g.met != nil {
		v = strings.ToUpper(verdict(*g.met))
	}
	if g.figure == "" {
		return fmt.Sprintf("%-12s %s", v, g.name)
	}
	return fmt.Sprintf("%-12s %s (%s)", v, g.name, g.figure)
}

func latP50(s latSample) float64  { return s.p50.Seconds() }
func latP99(s latSample) float64  { return s.p99.Seconds() }
func latP999(s latSample) float64 { return s.p999.Seconds() }
func latMax(s latSample) float64  { return s.max.Seconds() }

// latMedian is the median over rounds of a latency contender's figure, or
// 0 when it has none.
func (rep *report) latMedian(name string, f func(latSample) float64) float64 {
	return latMedianIn(rep.lat, name, f)
}

func latMedianIn(results []*latResult, name string, f func(latSample) float64) float64 {
	for _, r := range results {
		if r.c.name == name && len(r.samples) > 0 {
			return medianOf(r.samples, f)
		}
	}
	return 0
}

// attachEchoGoal is the primary goal: termkeep attach's echo p50 below
// tmux's, and its p99 no worse.
func (rep *report) attachEchoGoal() goal {
	return attachEchoGoalIn(rep.lat, "termkeep attach echo: p50 below tmux's, p99 no worse")
}

// reproEchoGoal is the same goal measured the echo-repro way.
func (rep *report) reproEchoGoal() goal {
	return attachEchoGoalIn(rep.latRepro, "termkeep attach echo, a shell's cat at 120×40 (echo-repro): p50 below tmux's, p99 no worse")
}

func attachEchoGoalIn(results []*latResult, name string) goal {
	g := goal{name: name}
	a50, a99 := latMedianIn(results, "termkeep attach", latP50), latMedianIn(results, "termkeep attach", latP99)
	t50, t99 := latMedianIn(results, "tmux", latP50), latMedianIn(results, "tmux", latP99)
	if a50 == 0 || t50 == 0 {
		return g
	}
	g.figure = fmt.Sprintf("p50 %s vs %s, p99 %s vs %s", fmtLat(a50), fmtLat(t50), fmtLat(a99), fmtLat(t99))
	g.met = decided(a50 < t50 && a99 <= t99)
	return g
}

// wsEchoGoal: a WebSocket viewer's echo p50 within wsEchoRaw × the raw pty's.
func (rep *report) wsEchoGoal() goal {
	g := goal{name: fmt.Sprintf("WebSocket echo p50 within %.0f× the raw pty's", wsEchoRaw)}
	w, raw := rep.latMedian("termkeep WebSocket viewer", latP50), rep.latMedian("raw pty", latP50)
	if w == 0 || raw == 0 {
		return g
	}
	g.figure = fmt.Sprintf("%s = %.1f× %s", fmtLat(w), w/raw, fmtLat(raw))
	g.met = decided(w <= wsEchoRaw*raw)
	return g
}

// p999Goal: every path's echo p99.9 under echoP999Max.
func (rep *report) p999Goal() goal {
	g := goal{name: fmt.Sprintf("echo p99.9 under %s on every path", fmtLat(echoP999Max.Seconds()))}
	var over, figs []string
	for _, r := range rep.lat {
		if len(r.samples) == 0 {
			continue
		}
		p := medianOf(r.samples, latP999)
		figs = append(figs, r.c.name+" "+fmtLat(p))
		if p >= echoP999Max.Seconds() {
			over = append(over, r.c.name)
		}
	}
	if len(figs) == 0 {
		return g
	}
	g.figure = strings.Join(figs, ", ")
	g.met = decided(len(over) == 0)
	return g
}

// attachThroughputGoal: termkeep attach at least as fast as dtach.
func (rep *report) attachThroughputGoal() goal {
	g := goal{name: "termkeep attach throughput at least dtach's"}
	a, d := rep.medianOf("termkeep attach"), rep.medianOf("dtach")
	if a == 0 || d == 0 {
		return g
	}
	g.figure = fmt.Sprintf("%.0f vs %.0f MB/s, %.2f×", a, d, a/d)
	g.met = decided(a >= attachDtachMin*d)
	return g
}

// fanAttachGoal: 8 attached clients against 1, no slower than tmux's
// ratio, with every byte delivered.
func (rep *report) fanAttachGoal() goal {
	g := goal{name: "8 attach clients against 1 no slower than tmux's ratio, every byte delivered"}
	tk := rep.fanRatio("attach8", "attach1")
	tm := rep.fanRatio("tmux8", "tmux1")
	if tk == 0 || tm == 0 {
		return g
	}
	d := rep.fanDelivered("attach8")
	g.figure = fmt.Sprintf("%.2f× vs tmux %.2f×; %s", tk, tm, d)
	g.met = decided(tk <= tm && d.complete())
	return g
}

// reattachGoalTmux: a fresh termkeep attach to the longest history draws
// its screen within reattachTmuxMax × tmux's time.
func (rep *report) reattachGoalTmux() goal {
	g := goal{name: fmt.Sprintf("fresh termkeep attach to a long history within %.1f× tmux's time", reattachTmuxMax)}
	if rep.reattach == nil {
		return g
	}
	var tk, tm time.Duration
	mib := 0
	for _, x := range rep.reattach.results {
		mib = max(mib, x.h.mib)
	}
	for _, x := range rep.reattach.results {
		if x.h.mib != mib || len(x.samples) == 0 {
			continue
		}
		med, _, _ := durStats(x.samples)
		switch x.c.name {
		case "termkeep attach":
			tk = med
		case "tmux attach":
			tm = med
		}
	}
	if tk == 0 || tm == 0 {
		return g
	}
	g.figure = fmt.Sprintf("%d MiB: %s vs %s, %.2f×", mib, fmtDur(tk), fmtDur(tm), float64(tk)/float64(tm))
	g.met = decided(float64(tk) <= reattachTmuxMax*float64(tm))
	return g
}

// goals are the echo goal and its targets, in the order they are printed.
func (rep *report) goals() []goal {
	return []goal{
		rep.attachEchoGoal(), rep.reproEchoGoal(), rep.wsEchoGoal(), rep.p999Goal(), rep.attachThroughputGoal(),
		rep.fanAttachGoal(), rep.reattachGoalTmux(), rep.predictP50Goal(), rep.predictWrongGoal(),
		rep.sshEchoP50Goal(), rep.sshEchoLeftGoal(),
	}
}

// goalsText writes the goals as the text report prints them.
func (rep *report) goalsText(b *strings.Builder) {
	b.WriteString("\nEcho goal and targets (this run, side by side):\n")
	for _, g := range rep.goals() {
		b.WriteString("  " + g.line() + "\n")
	}
}

// attachFanText writes the fan-out to attached terminals for the text
// report.
func (rep *report) attachFanText(b *strings.Builder) {
	if len(rep.attachFan) > 0 {
		b.WriteString("\nFan-out to attached terminals (time until every client has drawn the end marker):\n")
		textTable(b, attachFanHead, rep.attachFanRows())
	}
}

// goalsMarkdown writes the goals as a table, for docs/PERFORMANCE.md.
func (rep *report) goalsMarkdown(b *strings.Builder) {
	b.WriteString("\n## Echo goal and targets\n\n")
	b.WriteString("Each decided from figures of this run, measured side by side (see the sections above).\n\n")
	var rows [][]string
	for _, g := range rep.goals() {
		v := "not measured"
		if g.met != nil {
			v = verdict(*g.met)
		}
		rows = append(rows, []string{g.name, g.figure, v})
	}
	mdTable(b, []string{"goal or target", "figures", "verdict"}, rows)
}

// attachFanMarkdown writes the fan-out to attached terminals.
func (rep *report) attachFanMarkdown(b *strings.Builder) {
	if len(rep.attachFan) == 0 {
		return
	}
	b.WriteString("\n### Fan-out to attached terminals\n\n")
	fmt.Fprintf(b, "One session prints the %d MiB file; N clients, each in a pty of its own (`termkeep attach`, or "+
		"`tmux attach-session` to one tmux session), draw it. A run is timed from the go keystroke (typed into the first "+
		"client) until every client has drawn the end marker; \"N to 1\" is the median time of N clients over one's, the "+
		"figure to compare with tmux's. \"least bytes\" is the fewest bytes any client drew after the go keystroke: a "+
		"termkeep client that got every byte draws at least the file (a pty turns each newline into two bytes); tmux "+
		"redraws its screen instead, so its count is not a loss.\n\n", rep.cfg.fanMiB)
	mdTable(b, attachFanHead, rep.attachFanRows())
}
