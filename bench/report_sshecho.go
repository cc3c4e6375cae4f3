package main

import (
	"fmt"
	"strings"
)

// The predictive echo over ssh section of the report and its two goals.

var sshEchoHead = []string{"program", "keys", "perceived p50", "p99", "drawn predicted", "wrong cells left"}

func (rep *report) sshEchoRows() [][]string {
	var rows [][]string
	for _, r := range rep.sshEcho.programs {
		switch {
		case r.skipped != "":
			rows = append(rows, []string{r.name, "skipped: " + r.skipped, "", "", "", ""})
			continue
		case r.err != nil:
			rows = append(rows, []string{r.name, "failed: " + r.err.Error(), "", "", "", ""})
			continue
		}
		left := fmt.Sprint(r.left)
		if r.leftAt != "" {
			left += " (" + r.leftAt + ")"
		}
		rows = append(rows, []string{
			r.name,
			fmt.Sprintf("%d (%d timed)", r.typed, len(r.lat)),
			fmtDur(durQuantile(r.lat, 0.5)),
			fmtDur(durQuantile(r.lat, 0.99)),
			fmt.Sprintf("%d of %d timed", r.drawn, len(r.lat)),
			left,
		})
	}
	return rows
}

// sshEchoP50Goal: the perceived echo p50 in bash under sshEchoP50Max.
func (rep *report) sshEchoP50Goal() goal {
	g := goal{name: fmt.Sprintf("predictive echo over ssh: perceived p50 in bash under %s at %s each way", fmtDur(sshEchoP50Max), fmtDur(sshEchoDelay))}
	if rep.sshEcho == nil {
		return g
	}
	for _, r := range rep.sshEcho.programs {
		if r.name == "bash" && r.measured() {
			p50 := durQuantile(r.lat, 0.5)
			g.figure = fmtDur(p50)
			g.met = decided(p50 < sshEchoP50Max)
		}
	}
	return g
}

// sshEchoLeftGoal: no misprediction left on the screen, in any program.
func (rep *report) sshEchoLeftGoal() goal {
	g := goal{name: "predictive echo over ssh: no misprediction left on the screen"}
	if rep.sshEcho == nil {
		return g
	}
	var figs []string
	left, measured := 0, false
	for _, r := range rep.sshEcho.programs {
		if r.measured() {
			measured = true
			left += r.left
			figs = append(figs, fmt.Sprintf("%s %d", r.name, r.left))
		}
	}
	if !measured {
		return g
	}
	g.figure = "wrong cells: " + strings.Join(figs, ", ")
	g.met = decided(left == 0)
	return g
}

func (rep *report) sshEchoMethod() string {
	return fmt.Sprintf("`termkeep attach 127.0.0.1:SESSION` (--predict auto, its default) runs in a %d×%d pty and reaches "+
		"a private sshd on 127.0.0.1 through a proxy that holds every chunk %s each way (a %s round trip); the bench reads "+
		"the pty into a screen model of its own, the local terminal. A typist types %d keys into each program as the page's "+
		"bench does (the same lines, a key every 140 ms ± 20, a pause of 600 ms at each prompt; bash and zsh with termkeep's "+
		"shell integration, python3's REPL without it). **Perceived**: for each printable key, from its write to the pty "+
		"to the first chunk after which the local screen shows its character at its cell, predicted or echoed (a key typed "+
		"over a cell that already shows its character, a space over a blank one among them, is not timed). **Drawn predicted**: timed keys first shown "+
		"underlined, before their echo. **Wrong cells left**: once every line has run and the output has been quiet for a "+
		"second, the cells where the local screen differs from the session's own screen, or still shows a prediction's "+
		"underline. Alone: `%s`.",
		reproCols, reproRows, fmtDur(sshEchoDelay), fmtDur(2*sshEchoDelay), rep.sshEcho.keys, rep.onlyCommand("ssh-echo"))
}

// sshEchoText writes the section for the text report.
func (rep *report) sshEchoText(b *strings.Builder) {
	r := rep.sshEcho
	if r == nil {
		return
	}
	fmt.Fprintf(b, "\nPredictive echo over ssh through a %s-each-way proxy (%d keys per program):\n", fmtDur(sshEchoDelay), r.keys)
	textSkipped(b, r.skipped, r.err)
	if len(r.programs) > 0 {
		textTable(b, sshEchoHead, rep.sshEchoRows())
	}
}

// sshEchoMarkdown writes the section for docs/PERFORMANCE.md.
func (rep *report) sshEchoMarkdown(b *strings.Builder) {
	r := rep.sshEcho
	if r == nil {
		return
	}
	b.WriteString("\n## Predictive echo in attach over ssh\n\n")
	mdSkipped(b, r.skipped, r.err)
	if len(r.programs) > 0 {
		b.WriteString(rep.sshEchoMethod() + "\n\n")
		mdTable(b, sshEchoHead, rep.sshEchoRows())
		b.WriteString("\n")
		for _, g := range []goal{rep.sshEchoP50Goal(), rep.sshEchoLeftGoal()} {
			fmt.Fprintf(b, "- %s: %s\n", strings.TrimPrefix(g.name, "predictive echo over ssh: "), g.cell())
		}
	}
}

// sshEchoFailed reports whether the section ran and gave no figures.
func (rep *report) sshEchoFailed() bool {
	r := rep.sshEcho
	if r == nil {
		return false
	}
	if r.err != nil {
		return true
	}
	for _, p := range r.programs {
		if p.err != nil {
			return true
		}
	}
	return false
}
