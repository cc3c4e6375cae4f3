package main

import (
	"fmt"
	"strings"
)

// The predictive echo section of the report and its two goals.

var predictHead = []string{"shell", "keys", "perceived p50", "p99", "predicted", "drawn predicted", "wrong", "time to correct (median, max)", "round trip"}

func (rep *report) predictRows() [][]string {
	var rows [][]string
	for _, s := range rep.predict.shells {
		switch {
		case s.Skipped != "":
			rows = append(rows, []string{s.Shell, "skipped: " + s.Skipped, "", "", "", "", "", "", ""})
			continue
		case s.Error != "":
			rows = append(rows, []string{s.Shell, "failed: " + s.Error, "", "", "", "", "", "", ""})
			continue
		}
		fix := "none"
		if len(s.Corrections) > 0 {
			fix = fmt.Sprintf("%s, %s", fmtDur(ms(quantile(s.Corrections, 0.5))), fmtDur(ms(quantile(s.Corrections, 1))))
		}
		rows = append(rows, []string{
			s.Shell,
			fmt.Sprintf("%d (%d timed)", s.Typed, len(s.Latencies)),
			fmtDur(ms(quantile(s.Latencies, 0.5))),
			fmtDur(ms(quantile(s.Latencies, 0.99))),
			fmt.Sprintf("%.0f%% (%d of %d)", 100*s.predictedShare(), s.Shown, s.Editing),
			fmt.Sprintf("%d of %d timed", s.Drawn, len(s.Latencies)),
			fmt.Sprintf("%.1f%% (%d)", 100*s.wrongShare(), s.Wrong),
			fix,
			fmtDur(ms(s.RTT)),
		})
	}
	return rows
}

// predictP50Goal: the perceived echo p50 in bash under predictP50Max.
func (rep *report) predictP50Goal() goal {
	g := goal{name: fmt.Sprintf("predictive echo: perceived p50 in bash under %s at %s each way", fmtDur(predictP50Max), fmtDur(predictDelay))}
	if rep.predict == nil {
		return g
	}
	for _, s := range rep.predict.shells {
		if s.Shell == "bash" && s.measured() {
			p50 := ms(quantile(s.Latencies, 0.5))
			g.figure = fmtDur(p50)
			g.met = decided(p50 < predictP50Max)
		}
	}
	return g
}

// predictWrongGoal: mispredictions under predictWrongMax of the
// predictions shown, over every shell measured.
func (rep *report) predictWrongGoal() goal {
	g := goal{name: fmt.Sprintf("predictive echo: mispredictions under %.0f%%", 100*predictWrongMax)}
	if rep.predict == nil {
		return g
	}
	shown, wrong := 0, 0
	for _, s := range rep.predict.shells {
		if s.measured() {
			shown += s.Shown
			wrong += s.Wrong
		}
	}
	if shown == 0 {
		return g
	}
	g.figure = fmt.Sprintf("%d of %d, %.1f%%", wrong, shown, 100*float64(wrong)/float64(shown))
	g.met = decided(float64(wrong) < predictWrongMax*float64(shown))
	return g
}

func (rep *report) predictMethod() []string {
	return []string{
		fmt.Sprintf("The page in Debian's Chromium (headless) reaches the server through a proxy that delays each "+
			"WebSocket chunk %s each way (a %s round trip; the page's HTTP passes at once); predictive echo is on its "+
			"default, auto. A typist types %d keys into each shell, a key every 140 ms and a pause of 600 ms at each "+
			"prompt: short commands with a typo fixed by backspaces (bash and zsh with termkeep's shell integration, "+
			"python3's REPL without it), each line run with Enter once it is drawn. A key waits for the next frame, "+
			"at a time spread evenly over the frame's 16.7 ms, so the p50 of 120 keys moves by about 0.8 ms from run "+
			"to run; the full run types 360 (about 0.5 ms). Driver: `web/bench/predict.mjs`; "+
			"alone: `%s`.", fmtDur(predictDelay), fmtDur(2*predictDelay), rep.predict.keys, rep.onlyCommand("predict")),
		"**Perceived**: for each printable key, from its key event in the page (the event's timeStamp) to the first " +
			"animation frame that shows its character at its cell, predicted or echoed, read from the page's elements " +
			"once the frame's work (animation frame callbacks, style, layout) is done, before paint (a key typed over a " +
			"cell that already shows its character is not timed). **Predicted**: keys the predictor showed over the " +
			"printable keys and backspaces typed. **Drawn predicted**: timed keys whose first frame showed a predicted " +
			"character, not the echo. " +
			"**Wrong**: shown predictions rolled back (the echo differed, or came later than the prediction's deadline), " +
			"over those shown. **Time to correct**: how long a wrong prediction showed before it was rolled back. " +
			"Without shell integration (python3) the first key of each line waits for its echo, to earn confidence " +
			"again: hence its lower share and its p99 of a round trip.",
	}
}

// predictText writes the section for the text report.
func (rep *report) predictText(b *strings.Builder) {
	r := rep.predict
	if r == nil {
		return
	}
	fmt.Fprintf(b, "\nPredictive echo through a %s-each-way proxy (%d keys per shell):\n", fmtDur(predictDelay), r.keys)
	textSkipped(b, r.skipped, r.err)
	if len(r.shells) > 0 {
		textTable(b, predictHead, rep.predictRows())
	}
}

// predictMarkdown writes the section for docs/PERFORMANCE.md.
func (rep *report) predictMarkdown(b *strings.Builder) {
	r := rep.predict
	if r == nil {
		return
	}
	fmt.Fprintf(b, "\n## Predictive echo over a slow link\n\n")
	mdSkipped(b, r.skipped, r.err)
	if len(r.shells) > 0 {
		for _, l := range rep.predictMethod() {
			b.WriteString(l + "\n\n")
		}
		mdTable(b, predictHead, rep.predictRows())
		b.WriteString("\n")
		for _, g := range []goal{rep.predictP50Goal(), rep.predictWrongGoal()} {
			fmt.Fprintf(b, "- %s: %s\n", strings.TrimPrefix(g.name, "predictive echo: "), g.cell())
		}
	}
}

// predictFailed reports whether the section ran and gave no figures.
func (rep *report) predictFailed() bool {
	r := rep.predict
	if r == nil {
		return false
	}
	if r.err != nil {
		return true
	}
	for _, s := range r.shells {
		if s.Error != "" {
			return true
		}
	}
	return false
}
