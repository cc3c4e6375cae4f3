package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The screen model's own Go benchmarks (internal/screen, BenchmarkScreen*):
// how fast the server's model of each session's screen consumes output,
// and what snapshots and checkpoints cost. They are the package's; the bench
// runs them and parses whatever BenchmarkScreen* lines they print, so new
// ones show up without a change here. The package's memory test, when it
// logs its figures, gives the memory per session.

const screenPkg = "./internal/screen/"

type screenRow struct {
	name     string // without the Benchmark prefix and the -N suffix
	nsPerOp  float64
	mbps     float64 // 0 when the benchmark sets no bytes
	bPerOp   string
	allocsOp string
}

type screenResult struct {
	command    string // the benchmark command, as a reader would type it
	memCommand string // the memory test's command
	rows       []screenRow
	memLines   []string // what the memory test logged
	memNote    string   // why there are no memory lines, or that the test failed
	err        error
}

var benchLine = regexp.MustCompile(`^Benchmark(Screen\S*?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(.*)$`)

func runScreenBench(ctx context.Context, benchtime string) screenResult {
	res := screenResult{
		command:    fmt.Sprintf("go test -run='^$' -bench=BenchmarkScreen -benchtime=%s %s", benchtime, screenPkg),
		memCommand: fmt.Sprintf("go test -run='Memory' -count=1 -v %s", screenPkg),
	}
	root, err := moduleRoot()
	if err != nil {
		res.err = err
		return res
	}
	goBin := goCommand()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, goBin, "test", "-run=^$", "-bench=BenchmarkScreen", "-benchtime="+benchtime, screenPkg)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		row := screenRow{name: m[1], bPerOp: "–", allocsOp: "–"}
		row.nsPerOp, _ = strconv.ParseFloat(m[2], 64)
		f := strings.Fields(m[3])
		for i := 1; i < len(f); i++ {
			switch f[i] {
			case "MB/s":
				row.mbps, _ = strconv.ParseFloat(f[i-1], 64)
			case "B/op":
				row.bPerOp = f[i-1]
			case "allocs/op":
				row.allocsOp = f[i-1]
			}
		}
		res.rows = append(res.rows, row)
	}
	if err != nil && len(res.rows) == 0 {
		res.err = fmt.Errorf("%s: %v: %s", res.command, err, lastLines(string(out), 6))
		return res
	}
	if err != nil {
		res.memNote = fmt.Sprintf("the benchmark command failed after some results (%v)", err)
	}

	// Memory per session: the package's memory test logs it.
	cmd = exec.CommandContext(cctx, goBin, "test", "-run=Memory", "-count=1", "-v", screenPkg)
	cmd.Dir = root
	out, err = cmd.CombinedOutput()
	logLine := regexp.MustCompile(`^\s+\S+_test\.go:\d+: (.*)$`)
	for _, l := range strings.Split(string(out), "\n") {
		if m := logLine.FindStringSubmatch(l); m != nil {
			res.memLines = append(res.memLines, strings.TrimSpace(m[1]))
		}
	}
	switch {
	case err != nil && len(res.memLines) > 0:
		res.memNote = "the memory test reported a failure: " + lastLines(string(out), 3)
	case err != nil:
		res.memNote = fmt.Sprintf("the memory test did not run (%v)", err)
	case len(res.memLines) == 0:
		res.memNote = "the package's memory test logs no figures"
	}
	return res
}

// moduleRoot is the directory of the go.mod the bench belongs to: the
// current directory or one above it.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(d, screenPkg)); err != nil {
				return "", fmt.Errorf("%s has no %s", d, screenPkg)
			}
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: run the bench from the module", dir)
		}
	}
}

// goCommand is the go on PATH: the one `make bench` runs the bench with.
func goCommand() string { return "go" }

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " | ")
}
