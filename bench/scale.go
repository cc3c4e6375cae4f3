package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"termkeep/internal/client"
	"termkeep/internal/wire"
)

// Scale: many sessions each printing a little, all the time, each watched
// by one wire viewer that reads everything. Each session's child is `cat`
// of a named pipe; the bench writes scaleRate numbered lines a second into
// every pipe for the given time, each stamped with the wall clock at which
// it was written, the sessions' phases spread evenly over the period, then
// a last line with how many it wrote, and closes the pipe, so cat and the
// session end; a writer that falls behind (no CPU to spare) stops at the
// schedule's end rather than offer more than the rate for longer. (A child
// that paces itself, a bash loop or a Go or Perl program, costs 90–200 µs of
// CPU a line on this kind of machine, which at 500 × 20 lines a second is
// both cores: the bench would measure the children. cat's relay costs about
// 35 µs.) Every viewer attaches from offset 0 and checks, byte for byte,
// that it received the whole stream: every Output frame continues exactly
// where the last one ended, the stream ends at the offset the Exit frame
// states, and the line numbers run 0, 1, 2, … without a hole. The delay of
// a line is from the time in it to the time its last byte reached the
// viewer.

// scaleRate is how many lines a second each session prints.
const scaleRate = 20

// scaleWindowShort is how much shorter than the printing the CPU window is.
const scaleWindowShort = time.Second

// droppedMsg is what the server logs when it drops a viewer it has not
// heard from for its ping interval plus its pong timeout.
const droppedMsg = "dropping a viewer that stopped answering"

// scaleDrain is how long after the schedule's end the viewers may take to
// receive the rest; what has not arrived by then counts as lost.
const scaleDrain = 20 * time.Second

// scaleBatch is how close together writes are made in one wake-up of the
// writer: lines due within it are written at once.
const scaleBatch = time.Millisecond

type scaleReport struct {
	sessions int
	seconds  int
	lines    int // per session

	setup      time.Duration // creating the sessions and attaching the viewers
	writerLate time.Duration // the bench's writer at its latest against the schedule
	written    int64         // lines the writer wrote, over every session (sessions × lines if it kept up)

	cpu       cpuUse    // over the printing window: server, holders (owner = every holder), cat relays (child)
	window    float64   // seconds the CPU figures cover
	serverPct []float64 // the server's CPU, % of a core, one per second of the window

	dropped    int   // viewers the server dropped as not answering (its log)
	late       bool  // some viewer had not had its session's end scaleDrain after the last line
	viewers    int   // viewers that reached the Exit frame
	lostLines  int64 // lines written and never received (in time), over every viewer
	lostBytes  int64 // bytes between frames (offset holes), and missing at the end
	disorder   int64 // lines received out of order or twice
	snapshots  int   // snapshots received (a resync: bytes skipped)
	gapFrames  int
	delays     []time.Duration // every line's, sorted
	viewerP99  []float64       // each viewer's p99 delay, seconds, sorted
	viewerErrs []string
	err        error
}

// scaleViewer is one viewer's check of its session's stream.
type scaleViewer struct {
	idx    int
	st     *client.Stream
	next   uint64 // offset of the next byte expected
	seq    int    // next line number expected
	carry  []byte // a line cut by a frame boundary
	ended  bool   // the E line arrived
	wrote  int    // how many L lines the E line says were written
	got    int    // L lines received, each once, in order
	exit   *wire.Exit
	delays []time.Duration

	lostBytes, disorder int64
	snapshots, gaps     int
	err                 error
}

// read follows the stream until its Exit frame (or an error).
func (v *scaleViewer) read() {
	var stats frameStats
	for {
		f, err := v.st.Next()
		if err != nil {
			v.err = err
			return
		}
		now := time.Now()
		switch f.Type {
		case wire.TypeOutput:
			off, data, err := wire.ParseOutput(f.Payload)
			if err != nil {
				v.err = err
				return
			}
			if off != v.next {
				if off > v.next {
					v.lostBytes += int64(off - v.next)
				} else {
					v.disorder++ // bytes sent twice
				}
			}
			v.next = off + uint64(len(data))
			v.lines(data, now)
		case wire.TypeExit:
			var e wire.Exit
			if err := wire.ParseJSON(f.Payload, &e); err != nil {
				v.err = err
				return
			}
			v.exit = &e
			if e.End > v.next {
				v.lostBytes += int64(e.End - v.next)
			}
			if !v.ended {
				v.err = errors.New("the session ended without its last line")
			}
			v.snapshots, v.gaps = stats.snapshots, stats.gaps
			return
		default:
			if _, _, err := stats.terminalBytes(f); err != nil {
				v.err = err
				return
			}
		}
	}
}

// lines parses the whole lines in data ("L idx n usec" and "E idx n";
// anything else, such as the echo of the go keystroke, is skipped).
func (v *scaleViewer) lines(data []byte, now time.Time) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			v.carry = append(v.carry, data...)
			return
		}
		line := data[:i]
		if len(v.carry) > 0 {
			v.carry = append(v.carry, line...)
			line = v.carry
		}
		v.line(bytes.TrimRight(line, "\r"), now)
		v.carry = v.carry[:0]
		data = data[i+1:]
	}
}

func (v *scaleViewer) line(l []byte, now time.Time) {
	f := bytes.Fields(l)
	if len(f) < 3 || (string(f[0]) != "L" && string(f[0]) != "E") {
		return
	}
	if idx, err := strconv.Atoi(string(f[1])); err != nil || idx != v.idx {
		v.disorder++ // another session's line
		return
	}
	n, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return
	}
	if string(f[0]) == "E" {
		v.ended, v.wrote = true, n
		return
	}
	switch {
	case n >= v.seq: // a hole, if greater: counted against what was written
		v.seq = n + 1
		v.got++
	default:
		v.disorder++
		return
	}
	if len(f) >= 4 {
		if us, err := strconv.ParseInt(string(f[3]), 10, 64); err == nil {
			v.delays = append(v.delays, now.Sub(time.UnixMicro(us)))
		}
	}
}

func runScale(ctx context.Context, e *env, cfg config) *scaleReport {
	rep := &scaleReport{sessions: cfg.scaleSessions, seconds: cfg.scaleSeconds, lines: scaleRate * cfg.scaleSeconds}
	fifoDir, err := os.MkdirTemp(e.work, "scale")
	if err != nil {
		rep.err = err
		return rep
	}
	defer os.RemoveAll(fifoDir)
	srv, err := startServer(ctx, e.bin)
	if err != nil {
		rep.err = err
		return rep
	}
	defer srv.close()

	started := time.Now()
	logf("scale: %d sessions, one wire viewer each", rep.sessions)
	holders := make([]int, rep.sessions)
	children := make([]int, rep.sessions)
	viewers := make([]*scaleViewer, rep.sessions)
	pipes := make([]*os.File, rep.sessions)
	defer func() {
		for i, v := range viewers {
			if v != nil {
				v.st.Close()
			}
			if pipes[i] != nil {
				pipes[i].Close()
			}
		}
	}()
	err = forEach(ctx, rep.sessions, 8, func(i int) error {
		// Opened read-write, the pipe never blocks the open and is never
		// without a writer until the bench closes it.
		path := filepath.Join(fifoDir, strconv.Itoa(i))
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			return fmt.Errorf("mkfifo: %w", err)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		pipes[i] = f
		sess, hp, err := srv.create(ctx, fmt.Sprintf("s%d", i), []string{"cat", path})
		if err != nil {
			return err
		}
		holders[i] = hp
		st, err := client.New(srv.dir).Attach(ctx, sess.ID, wire.Hello{Role: wire.RoleViewer, From: 0})
		if err != nil {
			return fmt.Errorf("viewer %d: %w", i, err)
		}
		viewers[i] = &scaleViewer{idx: i, st: st, next: st.Welcome.Start}
		return nil
	})
	if err != nil {
		rep.err = err
		return rep
	}
	rep.setup = time.Since(started)
	logf("scale: sessions and viewers ready in %v", rep.setup.Round(100*time.Millisecond))
	// The children's pids, which the server knows once each has started.
	if list, err := srv.c.List(ctx); err != nil {
		logf("scale: list the sessions for their children's pids: %v", err)
	} else {
		pid := map[string]int{}
		for _, s := range list {
			pid[s.Name] = derefPid(s.Pid)
		}
		for i := range children {
			children[i] = pid[fmt.Sprintf("s%d", i)]
		}
	}

	var wg sync.WaitGroup
	for _, v := range viewers {
		wg.Add(1)
		go func() { defer wg.Done(); v.read() }()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	// Reading hundreds of processes' figures takes a while: the window
	// runs from the middle of the first reading to the middle of the last.
	s0 := time.Now()
	before := sampleScale(srv.pid(), holders, children)
	mid0 := s0.Add(time.Since(s0) / 2)
	t0 := time.Now()
	type writeResult struct {
		written []int // per session
		late    time.Duration
		err     error
	}
	wrote := make(chan writeResult, 1)
	go func() {
		w, late, err := writeScaleLines(ctx, pipes, rep.lines, t0)
		wrote <- writeResult{w, late, err}
	}()
	// The server's CPU second by second over the printing window, then
	// the whole window's figures.
	prev, prevT := before.server, time.Now()
	tick := time.NewTicker(time.Second)
	// The window ends a second before the printing, while every holder
	// and child is still alive to be sampled.
	window := time.NewTimer(time.Duration(rep.seconds)*time.Second - scaleWindowShort)
sampling:
	for {
		select {
		case <-tick.C:
			// The server's alone: the holders' and children's figures
			// are hundreds of /proc reads, taken at the window's ends.
			cur, _, err := procCPU(srv.pid())
			if err != nil {
				cur = -1
			}
			now := time.Now()
			if cur >= 0 && prev >= 0 {
				rep.serverPct = append(rep.serverPct, 100*(cur-prev).Seconds()/now.Sub(prevT).Seconds())
			}
			prev, prevT = cur, now
		case <-window.C:
			break sampling
		case <-ctx.Done():
			tick.Stop()
			rep.err = ctx.Err()
			return rep
		}
	}
	tick.Stop()
	s1 := time.Now()
	after := sampleScale(srv.pid(), holders, children)
	rep.window = s1.Add(time.Since(s1) / 2).Sub(mid0).Seconds()
	rep.cpu = after.minus(before)
	w := <-wrote
	if w.err != nil {
		rep.err = fmt.Errorf("write the lines: %w", w.err)
		return rep
	}
	written := w.written
	for _, n := range written {
		rep.written += int64(n)
	}
	rep.writerLate = w.late
	select {
	case <-done:
	case <-time.After(time.Until(t0.Add(time.Duration(rep.seconds)*time.Second + scaleDrain))):
		rep.late = true
	case <-ctx.Done():
		rep.err = ctx.Err()
		return rep
	}
	if rep.late {
		for _, v := range viewers {
			v.st.Close() // ends the readers that are still waiting
		}
		<-done
	}

	var all []time.Duration
	for i, v := range viewers {
		// Lost is what the writer wrote into the session's pipe and the
		// viewer never received (or not in time).
		lost := max(written[i]-v.got, 0)
		rep.lostLines += int64(lost)
		rep.lostBytes += v.lostBytes
		rep.disorder += v.disorder
		rep.snapshots += v.snapshots
		rep.gapFrames += v.gaps
		if v.exit != nil {
			rep.viewers++
		}
		switch {
		case v.exit == nil && rep.late && v.err == nil:
			rep.viewerErrs = append(rep.viewerErrs, fmt.Sprintf("viewer %d: had %d of the %d lines written, not its session's end, %v after the schedule's end",
				v.idx, v.got, written[i], scaleDrain))
		case v.err != nil:
			rep.viewerErrs = append(rep.viewerErrs, fmt.Sprintf("viewer %d: %v after %d of the %d lines written", v.idx, v.err, v.got, written[i]))
		}
		if len(v.delays) > 0 {
			d := slices.Clone(v.delays)
			slices.Sort(d)
			rep.viewerP99 = append(rep.viewerP99, rank(d, 0.99).Seconds())
		}
		all = append(all, v.delays...)
	}
	slices.Sort(all)
	slices.Sort(rep.viewerP99)
	rep.delays = all
	// A viewer the server gave up on says so only in the server's log.
	b, _ := os.ReadFile(filepath.Join(string(srv.dir), benchServeLog))
	rep.dropped = bytes.Count(b, []byte(droppedMsg))
	logf("scale: %d/%d viewers complete, %d lines lost, %d bytes lost, p99 delay %v, server CPU %.0f%% of a core",
		rep.viewers, rep.sessions, rep.lostLines, rep.lostBytes, rank(all, 0.99).Round(10*time.Microsecond),
		100*rep.cpu.server.Seconds()/rep.window)
	return rep
}

// writeScaleLines writes numbered lines into every pipe, session i's line
// n at t0 + n·period + i·period/len(pipes), for lines lines; then a last
// line saying how many it wrote, and closes the pipes (cat sees the end and
// exits). A writer that falls behind its schedule (a machine with no CPU to
// spare) stops writing when the schedule ends, rather than offer the
// sessions more than their rate for longer: written says how many lines
// each session got. late is the most a write came after its due time: the
// bench's own lag, which the delays do not include (a line's time is taken
// when it is written).
func writeScaleLines(ctx context.Context, pipes []*os.File, lines int, t0 time.Time) (written []int, late time.Duration, err error) {
	period := time.Second / scaleRate
	end := t0.Add(time.Duration(lines+1) * period) // a period of grace for the last wake-up
	written = make([]int, len(pipes))
	var buf []byte
	defer func() {
		for i, f := range pipes {
			fmt.Fprintf(f, "E %d %d\n", i, written[i])
			f.Close()
		}
	}()
write:
	for n := 0; n < lines; n++ {
		for i, f := range pipes {
			due := t0.Add(time.Duration(n)*period + time.Duration(i)*period/time.Duration(len(pipes)))
			if d := time.Until(due); d > scaleBatch {
				if err := sleepCtx(ctx, d); err != nil {
					return written, late, err
				}
			}
			now := time.Now()
			if now.After(end) {
				break write
			}
			late = max(late, now.Sub(due))
			buf = fmt.Appendf(buf[:0], "L %d %d %d\n", i, n, now.UnixMicro())
			if _, err := f.Write(buf); err != nil {
				return written, late, fmt.Errorf("session %d: %w", i, err)
			}
			written[i]++
		}
	}
	return written, late, nil
}

// rank is the nearest-rank percentile p of sorted durations (0 if none).
func rank(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// scaleSample is the CPU the scale run's processes have used so far.
type scaleSample struct {
	server, bench, all time.Duration
	holders, children  []time.Duration
}

// sampleScale reads the processes' CPU, the hundreds of holders and
// children first, from schedstat, and nothing that scans all of /proc: at
// this scale that takes long enough for sessions to end meanwhile.
func sampleScale(server int, holders, children []int) scaleSample {
	s := scaleSample{holders: runtimes(holders), children: runtimes(children), server: -1, bench: selfCPU(), all: -1}
	if t, _, err := procCPU(server); err == nil {
		s.server = t
	}
	if t, err := machineBusy(); err == nil {
		s.all = t
	}
	return s
}

// minus is the CPU used between b and s, as a cpuUse: owner is every
// holder, child every child.
func (s scaleSample) minus(b scaleSample) cpuUse {
	d := func(x, y time.Duration) time.Duration {
		if x < 0 || y < 0 {
			return -1
		}
		return x - y
	}
	u := noCPU()
	u.server, u.bench, u.all = d(s.server, b.server), d(s.bench, b.bench), d(s.all, b.all)
	u.owner, u.child = since(s.holders, b.holders), since(s.children, b.children)
	return u
}

// runtimes is each process's CPU time so far, from its threads' schedstat
// (exact, where /proc/<pid>/stat would round each of hundreds of small
// figures down to 10 ms); -1 where it cannot be read.
func runtimes(pids []int) []time.Duration {
	out := make([]time.Duration, len(pids))
	for i, pid := range pids {
		t, err := procRuntime(pid)
		if err != nil || pid <= 0 {
			t = -1
		}
		out[i] = t
	}
	return out
}

// since is the CPU time used between before and after, summed over the
// processes read both times (-1 if none was).
func since(after, before []time.Duration) time.Duration {
	var sum time.Duration
	n := 0
	for i, t := range after {
		if t >= 0 && before[i] >= 0 && t >= before[i] {
			sum += t - before[i]
			n++
		}
	}
	if n == 0 {
		return -1
	}
	return sum
}
