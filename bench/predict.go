package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// The predictive echo section: the page in Debian's Chromium reaching a
// termkeep server through a proxy that delays each WebSocket chunk
// predictDelay each way, typing into bash, zsh and python3's REPL. The
// driver is web/bench/predict.mjs (node and playwright-core, as the
// browser tests); this side runs it and turns what it prints into figures.

const (
	predictDelay     = 150 * time.Millisecond // each way
	fullPredictKeys  = 360                    // per shell (report_predict.go says why)
	quickPredictKeys = 40

	predictP50Max   = 10 * time.Millisecond // perceived echo p50 in bash
	predictWrongMax = 0.01                  // mispredictions over predictions shown
)

// predictShell is what the driver reports for one shell.
type predictShell struct {
	Shell       string    `json:"shell"`
	Skipped     string    `json:"skipped"`
	Error       string    `json:"error"`
	Typed       int       `json:"typed"`
	Editing     int       `json:"editing"`
	Latencies   []float64 `json:"latencies"`
	Drawn       int       `json:"drawn"` // timed keys whose first frame showed a prediction
	Shown       int       `json:"shown"`
	Wrong       int       `json:"wrong"`
	Corrections []float64 `json:"corrections"`
	RTT         float64   `json:"rtt"`
}

type predictReport struct {
	keys    int
	shells  []predictShell
	skipped string // what is missing to run it
	err     error
}

// predictDriver finds web/bench/predict.mjs beside the bin directory (the
// checkout) or under the working directory.
func predictDriver(bin string) (string, error) {
	for _, root := range []string{filepath.Dir(bin), "."} {
		p := filepath.Join(root, "web", "bench", "predict.mjs")
		if _, err := os.Stat(p); err == nil {
			if _, err := os.Stat(filepath.Join(root, "web", "node_modules", "playwright-core")); err != nil {
				return "", errors.New("web/node_modules has no playwright-core: run make deps")
			}
			return filepath.Abs(p)
		}
	}
	return "", errors.New("web/bench/predict.mjs is missing: run the bench from the checkout")
}

// runPredict runs the driver once for every shell, keys keys each.
func runPredict(ctx context.Context, e *env, cfg config) *predictReport {
	keys := map[bool]int{true: quickPredictKeys, false: fullPredictKeys}[cfg.quick]
	rep := &predictReport{keys: keys}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath("node"); err != nil {
		rep.skipped = "node is missing (apt-get install nodejs)"
		return rep
	}
	if _, err := os.Stat(chromium); err != nil {
		rep.skipped = fmt.Sprintf("Chromium is missing at %s (apt-get install chromium)", chromium)
		return rep
	}
	driver, err := predictDriver(e.bin)
	if err != nil {
		rep.skipped = err.Error()
		return rep
	}
	logf("predictive echo: %d keys each into bash, zsh and python3, %v each way", keys, predictDelay)
	// Generous: a typist's pace is about 7 keys a second.
	rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(rctx, "node", driver, strconv.Itoa(keys), strconv.Itoa(int(predictDelay/time.Millisecond)))
	cmd.Dir = filepath.Dir(filepath.Dir(driver))
	cmd.Env = append(os.Environ(), "TK_UI_BIN="+e.bin, "CHROMIUM="+chromium)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	rep.shells, rep.err = parsePredict(out)
	if err != nil {
		rep.err = fmt.Errorf("%s: %w: %s", filepath.Base(driver), err, lastLines(stderr.String(), 5))
	}
	for _, s := range rep.shells {
		logf("predictive echo: %s", s.summary())
	}
	return rep
}

// parsePredict reads the driver's output: a JSON object a line.
func parsePredict(out []byte) ([]predictShell, error) {
	var shells []predictShell
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var s predictShell
		if err := json.Unmarshal(line, &s); err != nil {
			return shells, fmt.Errorf("read the driver's line %.80q: %w", line, err)
		}
		if s.Shell == "" {
			return shells, fmt.Errorf("the driver's line %.80q names no shell", line)
		}
		shells = append(shells, s)
	}
	return shells, sc.Err()
}

// quantile is the q-quantile (0..1) of xs by the nearest rank, 0 for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

// measured says whether the shell gave figures.
func (s predictShell) measured() bool {
	return s.Skipped == "" && s.Error == "" && len(s.Latencies) > 0
}

// predictedShare is the share of editing keys shown predicted.
func (s predictShell) predictedShare() float64 {
	if s.Editing == 0 {
		return 0
	}
	return float64(s.Shown) / float64(s.Editing)
}

// wrongShare is the share of shown predictions rolled back.
func (s predictShell) wrongShare() float64 {
	if s.Shown == 0 {
		return 0
	}
	return float64(s.Wrong) / float64(s.Shown)
}

func (s predictShell) summary() string {
	switch {
	case s.Skipped != "":
		return s.Shell + " skipped: " + s.Skipped
	case s.Error != "":
		return s.Shell + " failed: " + s.Error
	}
	return fmt.Sprintf("%s: %d keys, perceived p50 %s p99 %s, %.0f%% predicted (%d of %d timed drawn predicted), %d of %d wrong",
		s.Shell, s.Typed, fmtDur(ms(quantile(s.Latencies, 0.5))), fmtDur(ms(quantile(s.Latencies, 0.99))),
		100*s.predictedShare(), s.Drawn, len(s.Latencies), s.Wrong, s.Shown)
}
