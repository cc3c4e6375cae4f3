package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Fan-out to attached terminals: one session printing the workload, watched
// by N clients each in a pty of its own (termkeep attach, or tmux attach to
// one tmux session), timed from the go keystroke until every client has
// drawn the end marker. What matters is the ratio of N clients to one,
// against tmux's in the same run.

// attachFanCase is one configuration: a kind of client and how many.
type attachFanCase struct {
	name    string // attach1, attach8, tmux1, tmux8
	tool    string // "termkeep attach" or "tmux"
	clients int
}

type attachFanSample struct {
	wall     time.Duration
	minBytes int64 // the least any client drew between go and the end marker
	resyncs  int   // termkeep: resyncs the server logged during the run
}

type attachFanResult struct {
	c       attachFanCase
	size    int64
	samples []attachFanSample
	errs    []string
	skipped string
}

func attachFanCases() []attachFanCase {
	return []attachFanCase{
		{"attach1", "termkeep attach", 1}, {"attach8", "termkeep attach", 8},
		{"tmux1", "tmux", 1}, {"tmux8", "tmux", 8},
	}
}

// ptyClient is one attached client: its pty and what it has drawn.
type ptyClient struct {
	cmd   *exec.Cmd
	ptmx  *os.File
	stop  func()
	ready chan struct{}
	done  chan struct{}
	at    time.Time
	n     int64
	err   error
}

func (pc *ptyClient) read(m markers) {
	src := newPtySource(pc.ptmx)
	ready, end := newScanner(m.ready), newScanner(m.end)
	isReady := false
	defer func() {
		if !isReady {
			close(pc.ready)
		}
		close(pc.done)
	}()
	for {
		p, err := src.next()
		if err != nil {
			pc.err = err
			return
		}
		if !isReady {
			if ready.feed(p) {
				isReady = true
				close(pc.ready)
			}
			continue
		}
		pc.n += int64(len(p))
		if end.feed(p) {
			pc.at = time.Now()
			return
		}
	}
}

// runAttachFan is one run of case c with the workload at file.
func runAttachFan(ctx context.Context, e *env, c attachFanCase, file string) (attachFanSample, error) {
	var start func() *exec.Cmd
	resyncs := func() int { return 0 }
	switch c.tool {
	case "tmux":
		if _, err := exec.LookPath("tmux"); err != nil {
			return attachFanSample{}, fmt.Errorf("%w: tmux is not installed", errSkipped)
		}
		tmux, sock := e.newTmux()
		if out, err := tmux(ctx, "new-session", "-d", "-s", "b", "-x", strconv.Itoa(termCols), "-y", strconv.Itoa(termRows),
			e.m.childScript(file), ";", "set-option", "-g", "status", "off").CombinedOutput(); err != nil {
			return attachFanSample{}, fmt.Errorf("tmux new-session: %v: %s", err, out)
		}
		defer func() {
			c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			tmux(c, "kill-server").Run()
			os.Remove(sock)
		}()
		start = func() *exec.Cmd { return tmux(context.Background(), "attach-session", "-t", "b") }
	default:
		srv, err := startServer(ctx, e.bin)
		if err != nil {
			return attachFanSample{}, err
		}
		defer srv.close()
		if _, _, err := srv.create(ctx, "b", []string{"sh", "-c", e.m.childScript(file)}); err != nil {
			return attachFanSample{}, err
		}
		start = func() *exec.Cmd {
			cmd := exec.Command(srv.termkeep(), "--state-dir", string(srv.dir), "--no-autostart", "attach", "b")
			cmd.Env = viewerEnv()
			return cmd
		}
		resyncs = srv.resyncs
	}
	clients := make([]*ptyClient, c.clients)
	defer func() {
		for _, pc := range clients {
			if pc != nil {
				pc.stop()
			}
		}
	}()
	for i := range clients {
		cmd := start()
		ptmx, stop, err := startInPty(cmd)
		if err != nil {
			return attachFanSample{}, err
		}
		pc := &ptyClient{cmd: cmd, ptmx: ptmx, stop: stop, ready: make(chan struct{}), done: make(chan struct{})}
		clients[i] = pc
		go pc.read(e.m)
	}
	for i, pc := range clients {
		select {
		case <-pc.ready:
			if pc.err != nil {
				return attachFanSample{}, fmt.Errorf("client %d, waiting for the child to start: %w", i+1, pc.err)
			}
		case <-ctx.Done():
			return attachFanSample{}, fmt.Errorf("client %d, waiting for the child to start: %w", i+1, ctx.Err())
		}
	}
	before := resyncs()
	t0 := time.Now()
	if _, err := clients[0].ptmx.Write([]byte("\r")); err != nil {
		return attachFanSample{}, fmt.Errorf("sending go: %w", err)
	}
	s := attachFanSample{minBytes: -1}
	var last time.Time
	for i, pc := range clients {
		select {
		case <-pc.done:
		case <-ctx.Done():
			return attachFanSample{}, fmt.Errorf("waiting for the end marker at client %d of %d: %w", i+1, len(clients), ctx.Err())
		}
		if pc.at.IsZero() {
			return attachFanSample{}, fmt.Errorf("client %d, waiting for the end marker: %v", i+1, pc.err)
		}
		if pc.at.After(last) {
			last = pc.at
		}
		if s.minBytes < 0 || pc.n < s.minBytes {
			s.minBytes = pc.n
		}
	}
	s.wall = last.Sub(t0)
	s.resyncs = resyncs() - before
	return s, nil
}

// runAttachFans runs every case for the given rounds, interleaved.
func runAttachFans(ctx context.Context, e *env, cfg config) ([]*attachFanResult, error) {
	var results []*attachFanResult
	for _, c := range attachFanCases() {
		if cfg.only != "" && !matchesAny(c.name, strings.Split(cfg.only, ",")) && !matchesAny("fanout", strings.Split(cfg.only, ",")) {
			continue
		}
		_, size, err := e.workload(cfg.fanMiB)
		if err != nil {
			return nil, err
		}
		results = append(results, &attachFanResult{c: c, size: size})
	}
	for round := 1; round <= cfg.rounds; round++ {
		for _, r := range results {
			if r.skipped != "" {
				continue
			}
			path, _, _ := e.workload(cfg.fanMiB)
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second+time.Duration(r.size/4e6)*time.Second)
			s, err := runAttachFan(rctx, e, r.c, path)
			cancel()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			switch {
			case err != nil && strings.HasPrefix(err.Error(), errSkipped.Error()):
				r.skipped = strings.TrimPrefix(err.Error(), errSkipped.Error()+": ")
			case err != nil:
				r.errs = append(r.errs, err.Error())
				logf("round %d/%d fan-out %-8s FAILED: %v", round, cfg.rounds, r.c.name, err)
			default:
				r.samples = append(r.samples, s)
				logf("round %d/%d fan-out %-8s %8.1f MB/s  (least bytes at a client %.3f× the file, %d resyncs)",
					round, cfg.rounds, r.c.name, mbps(r.size, s.wall), float64(s.minBytes)/float64(r.size), s.resyncs)
			}
		}
	}
	return results, nil
}

// fanRatio is the median wall time of case many over case one's, or 0.
func (rep *report) fanRatio(many, one string) float64 {
	med := func(name string) float64 {
		for _, r := range rep.attachFan {
			if r.c.name == name && len(r.samples) > 0 {
				return medianOf(r.samples, func(s attachFanSample) float64 { return s.wall.Seconds() })
			}
		}
		return 0
	}
	m, o := med(many), med(one)
	if m == 0 || o == 0 {
		return 0
	}
	return m / o
}

// fanDelivery is what the runs of a termkeep case delivered: every byte
// when no run failed, none was resynced, and no client drew less than the
// file.
type fanDelivery struct {
	runs, failed int
	resyncs      int
	least        float64 // the fewest bytes a client drew, × the file
}

func (d fanDelivery) complete() bool {
	return d.runs > 0 && d.failed == 0 && d.resyncs == 0 && d.least >= 1
}

// String says why bytes were not all delivered, or that they were.
func (d fanDelivery) String() string {
	if d.complete() {
		return "every byte delivered"
	}
	var why []string
	if d.failed > 0 {
		why = append(why, fmt.Sprintf("%d of %d runs failed", d.failed, d.runs))
	}
	if d.resyncs > 0 {
		why = append(why, fmt.Sprintf("%d resyncs", d.resyncs))
	}
	if d.least < 1 {
		why = append(why, fmt.Sprintf("a client drew %.2f× the file", d.least))
	}
	return "bytes lost: " + strings.Join(why, ", ")
}

// fanDelivered sums up what the runs of case name delivered.
func (rep *report) fanDelivered(name string) fanDelivery {
	var d fanDelivery
	for _, r := range rep.attachFan {
		if r.c.name != name {
			continue
		}
		d.runs, d.failed, d.least = len(r.samples)+len(r.errs), len(r.errs), -1
		for _, s := range r.samples {
			d.resyncs += s.resyncs
			if x := float64(s.minBytes) / float64(r.size); d.least < 0 || x < d.least {
				d.least = x
			}
		}
		d.least = max(d.least, 0)
	}
	return d
}

var attachFanHead = []string{"clients", "median", "MB/s", "min–max", "N to 1", "least bytes × file", "resyncs", "runs"}

func (rep *report) attachFanRows() [][]string {
	var rows [][]string
	for _, r := range rep.attachFan {
		runs := fmt.Sprintf("%d/%d", len(r.samples), len(r.samples)+len(r.errs))
		label := fmt.Sprintf("%d × %s", r.c.clients, r.c.tool)
		switch {
		case r.skipped != "":
			rows = append(rows, []string{label, "skipped: " + r.skipped, "", "", "", "", "", ""})
			continue
		case len(r.samples) == 0:
			rows = append(rows, []string{label, "failed", "", "", "", "", "", runs})
			continue
		}
		var ds []time.Duration
		least, resyncs := int64(-1), 0
		for _, s := range r.samples {
			ds = append(ds, s.wall)
			if least < 0 || s.minBytes < least {
				least = s.minBytes
			}
			resyncs += s.resyncs
		}
		med, lo, hi := durStats(ds)
		ratio := "–"
		if r.c.clients > 1 {
			one := strings.TrimSuffix(r.c.name, strconv.Itoa(r.c.clients)) + "1"
			if x := rep.fanRatio(r.c.name, one); x > 0 {
				ratio = fmt.Sprintf("%.2f×", x)
			}
		}
		rows = append(rows, []string{label, fmtDur(med), fmt.Sprintf("%.0f", mbps(r.size, med)), fmtDur(lo) + "–" + fmtDur(hi),
			ratio, fmt.Sprintf("%.3f", float64(least)/float64(r.size)), strconv.Itoa(resyncs), runs})
	}
	return rows
}
