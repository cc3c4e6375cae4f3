package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Fan-out: one session printing the workload with cat, watched by N
// WebSocket viewers (browser tabs, as far as the server can tell), timed
// from the go keystroke until every viewer has the end marker. The stalled
// case adds one more WebSocket viewer that reads nothing after its Welcome:
// the producer must not notice it.

// fanCase is one configuration of the fan-out table.
type fanCase struct {
	name    string
	viewers int  // viewers that read
	stalled bool // plus one that never reads
	mib     int  // file size
}

func (c fanCase) label() string {
	s := fmt.Sprintf("%d WebSocket viewer", c.viewers)
	if c.viewers != 1 {
		s += "s"
	}
	if c.stalled {
		s += " + 1 stalled"
	}
	return s
}

// fanSample is one timed fan-out run.
type fanSample struct {
	wall      time.Duration
	minBytes  int64 // the least any viewer received between go and the end marker
	snapshots int   // snapshots the reading viewers received (resyncs)
	resyncs   int   // resyncs the server logged during the run, every viewer
	cpu       cpuUse
}

type fanResult struct {
	c       fanCase
	size    int64
	samples []fanSample
	errs    []string
}

// fanViewer is one reading viewer's side of a run.
type fanViewer struct {
	v     *wsViewer
	ready chan struct{} // closed once it has seen the ready marker
	done  chan struct{} // closed once it has seen the end marker (or failed)
	gone  chan struct{} // closed when its reader returns
	at    time.Time     // when it saw the end marker
	n     int64         // bytes after the ready marker, up to the end marker
	snaps int           // snapshots received up to the end marker
	err   error
}

// read follows one viewer until the end marker, then keeps reading (and
// answering pings) until the connection closes.
func (fv *fanViewer) read(m markers) {
	ready, end := newScanner(m.ready), newScanner(m.end)
	readyClosed, doneClosed := false, false
	defer close(fv.gone)
	defer func() {
		if !readyClosed {
			close(fv.ready)
		}
		if !doneClosed {
			close(fv.done)
		}
	}()
	for {
		p, err := fv.v.chunk()
		if err != nil {
			if !doneClosed {
				fv.err = err
			}
			return
		}
		if !readyClosed {
			if ready.feed(p) {
				close(fv.ready)
				readyClosed = true
			}
			continue
		}
		if doneClosed {
			continue
		}
		fv.n += int64(len(p))
		if end.feed(p) {
			fv.at = time.Now()
			fv.snaps = fv.v.stats.snapshots
			close(fv.done)
			doneClosed = true
		}
	}
}

// runFanout is one run of case c with the workload at file.
func runFanout(ctx context.Context, e *env, c fanCase, file string) (fanSample, error) {
	srv, err := startServer(ctx, e.bin)
	if err != nil {
		return fanSample{}, err
	}
	defer srv.close()
	sess, holderPid, err := srv.create(ctx, "b", []string{"sh", "-c", e.m.childScript(file)})
	if err != nil {
		return fanSample{}, err
	}
	t, err := srv.wsTarget(ctx)
	if err != nil {
		return fanSample{}, err
	}
	var all []*wsViewer
	defer func() {
		for _, v := range all {
			v.close()
		}
	}()
	// Every viewer starts at offset 0, so each sees the ready marker: the
	// go keystroke is sent once all of them are attached and caught up.
	fvs := make([]*fanViewer, c.viewers)
	for i := range fvs {
		v, err := dialWS(ctx, t, sess.ID, "from=0", false)
		if err != nil {
			return fanSample{}, fmt.Errorf("viewer %d: %w", i+1, err)
		}
		all = append(all, v)
		fvs[i] = &fanViewer{v: v, ready: make(chan struct{}), done: make(chan struct{}), gone: make(chan struct{})}
		go fvs[i].read(e.m)
	}
	if c.stalled {
		// Live output only, and after the Welcome it reads nothing: the
		// server's writes to it block once the socket buffers are full.
		v, err := dialWS(ctx, t, sess.ID, "from=-1", false)
		if err != nil {
			return fanSample{}, fmt.Errorf("stalled viewer: %w", err)
		}
		all = append(all, v)
	}
	for i, fv := range fvs {
		select {
		case <-fv.ready:
			if fv.err != nil {
				return fanSample{}, fmt.Errorf("viewer %d, waiting for the child to start: %w", i+1, fv.err)
			}
		case <-ctx.Done():
			return fanSample{}, fmt.Errorf("viewer %d, waiting for the child to start: %w", i+1, ctx.Err())
		}
	}

	r := run{childPid: derefPid(sess.Pid), ownerPid: holderPid, serverPid: srv.pid()}
	resyncsBefore := srv.resyncs()
	before := sampleCPU(r)
	t0 := time.Now()
	if err := fvs[0].v.input([]byte("\r")); err != nil {
		return fanSample{}, fmt.Errorf("sending go: %w", err)
	}
	s := fanSample{minBytes: -1}
	var last time.Time
	for i, fv := range fvs {
		select {
		case <-fv.done:
		case <-ctx.Done():
			return fanSample{}, fmt.Errorf("waiting for the end marker at viewer %d of %d: %w (%s)", i+1, len(fvs), ctx.Err(), progress(fvs))
		}
		if fv.err != nil {
			return fanSample{}, fmt.Errorf("viewer %d, waiting for the end marker: %w", i+1, fv.err)
		}
		if fv.at.After(last) {
			last = fv.at
		}
	}
	s.wall = last.Sub(t0)
	time.Sleep(150 * time.Millisecond) // let the shell reap cat, as timeRun does
	s.cpu = sampleCPU(r).minus(before)
	s.resyncs = srv.resyncs() - resyncsBefore
	for _, fv := range fvs {
		if s.minBytes < 0 || fv.n < s.minBytes {
			s.minBytes = fv.n
		}
		s.snapshots += fv.snaps
	}
	return s, nil
}

// progress says how many viewers are done, for a timeout's message.
func progress(fvs []*fanViewer) string {
	n := 0
	for _, fv := range fvs {
		select {
		case <-fv.done:
			n++
		default:
		}
	}
	return fmt.Sprintf("%d of %d viewers had it", n, len(fvs))
}

// fanCases are the configurations measured, in the order they run within a
// round (interleaved with each other, round by round).
func fanCases(cfg config) []fanCase {
	return []fanCase{
		{name: "ws1", viewers: 1, mib: cfg.fanMiB},
		{name: "ws1+stalled", viewers: 1, stalled: true, mib: cfg.fanMiB},
		{name: "ws8", viewers: 8, mib: cfg.fanMiB},
		{name: "ws64", viewers: 64, mib: cfg.fan64MiB},
	}
}

// runFanouts runs every fan-out case for the given rounds, interleaved.
func runFanouts(ctx context.Context, e *env, cfg config) ([]*fanResult, error) {
	var results []*fanResult
	for _, c := range fanCases(cfg) {
		if cfg.only != "" && !matchesAny(c.name, strings.Split(cfg.only, ",")) && !matchesAny("fanout", strings.Split(cfg.only, ",")) {
			continue
		}
		_, size, err := e.workload(c.mib)
		if err != nil {
			return nil, err
		}
		results = append(results, &fanResult{c: c, size: size})
	}
	for round := 1; round <= cfg.rounds; round++ {
		for _, r := range results {
			path, _, _ := e.workload(r.c.mib)
			// As for throughput: 4 MB/s still finishes.
			perRun := 30*time.Second + time.Duration(r.size/4e6)*time.Second
			rctx, cancel := context.WithTimeout(ctx, perRun)
			s, err := runFanout(rctx, e, r.c, path)
			cancel()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err != nil {
				r.errs = append(r.errs, err.Error())
				logf("round %d/%d %-22s FAILED: %v", round, cfg.rounds, r.c.label(), err)
				continue
			}
			r.samples = append(r.samples, s)
			logf("round %d/%d %-26s %8.1f MB/s  (least bytes at a viewer %.3f× the file, %d snapshots at the viewers, %d resyncs logged)",
				round, cfg.rounds, r.c.label(), mbps(r.size, s.wall), float64(s.minBytes)/float64(r.size), s.snapshots, s.resyncs)
		}
	}
	return results, nil
}
