package soak

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
)

// Soak: many sessions each printing 20 lines a second, each followed by a
// viewer that keeps up and by a slow one (a browser on a bad link: it acks
// what it read and stops reading for a while), for a duration. Short here
// (50 sessions, 30 s); `make soak` runs 500 sessions for an hour
// (TK_SOAK_SESSIONS and TK_SOAK_DURATION change both versions;
// TK_SOAK_WARMUP the time before memory counts as steady). No line is lost
// or repeated in any log or at any keeping-up viewer; the slow viewers are
// skipped to the present with snapshots and get exact bytes between them;
// the server's fds do not grow and its RSS slope after warm-up is reported
// (asserted loosely). The server has no debug endpoint for goroutines: its
// thread count from /proc stands in for them.
func TestSoak(t *testing.T) {
	e2e.SkipShort(t)
	sessions, duration := 50, 30*time.Second
	if e2e.SoakMode() {
		sessions, duration = 500, time.Hour
	}
	if v := os.Getenv("TK_SOAK_SESSIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("TK_SOAK_SESSIONS=%q is not a number of sessions", v)
		}
		sessions = n
	}
	if v := os.Getenv("TK_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("TK_SOAK_DURATION=%q is not a duration (e.g. 30s, 1h)", v)
		}
		duration = d
	}
	const (
		pad     = 80                              // 101-byte lines
		perSec  = 20 * (10 + 1 + pad + 1 + 8 + 2) // bytes a second per session
		window  = 1 << 20                         // the server's in-memory window per session (docs/architecture.md)
		readFor = 5 * time.Second                 // the slow viewer reads this long, then pauses
	)
	// --viewer-queue: 16 s of one session's output (the hour: 24 s), and
	// the slow viewer's pause, past it. The pause stays under 40 s: the
	// server drops a viewer silent for its ping interval and pong timeout
	// (30 s + 10 s), and one that came back by offset was never resynced.
	queue, pause := 32<<10, 20*time.Second
	if e2e.SoakMode() {
		queue, pause = 48<<10, 36*time.Second
	}
	// The queue is small enough that every pause of the slow viewer ends in
	// a snapshot, and large enough that a keeping-up viewer is never taken
	// for a slow one, even starved for seconds on a loaded machine (for an
	// hour, for up to 24 s).
	//
	// Memory grows until every session's window is full; after that it
	// should be flat.
	// The screen models' scrollback (10,000 lines: 500 s of output) fills
	// in about the same time; on a machine with no CPU to spare the lines
	// come slower than scheduled, hence the margin.
	fill := time.Duration(window / perSec * float64(time.Second))
	warm := min(duration/3, 2*fill+2*time.Minute)
	if v := os.Getenv("TK_SOAK_WARMUP"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d >= duration {
			t.Fatalf("TK_SOAK_WARMUP=%q is not a duration shorter than the soak", v)
		}
		warm = d
	}
	sample := max(duration/60, time.Second)
	// A server whose memory runs away is stopped before it takes the
	// machine down with it (TK_SOAK_MAX_RSS, in MiB).
	maxRSS := int64(6 << 10)
	if v := os.Getenv("TK_SOAK_MAX_RSS"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			t.Fatalf("TK_SOAK_MAX_RSS=%q is not a number of MiB", v)
		}
		maxRSS = n
	}

	e := e2e.NewEnv(t)
	e.ServerArgs = []string{"--viewer-queue", strconv.Itoa(queue)}
	e.StartServer()
	pid := e.Srv.Cmd.Process.Pid
	wd, _ := os.Getwd()

	// Each child is cat of a named pipe in a raw tty, and the test writes
	// the lines: a child that paces itself (a Go, bash or Perl loop) costs
	// 90–200 µs of CPU a line here, which at 500 sessions is both cores,
	// and the soak would measure its children (docs/PERFORMANCE.md, scale).
	t0 := time.Now()
	ids := make([]string, sessions)
	feed := newFeeder(t, sessions, pad)
	parallel(t, sessions, 8, func(i int) error {
		s, err := e.C.Create(context.Background(), api.CreateRequest{
			Name: fmt.Sprintf("soak%04d", i), Cwd: wd,
			Command: []string{"sh", "-c", `stty raw -echo && exec cat "$0"`, feed.path(i)},
		})
		ids[i] = s.ID
		return err
	})
	created := time.Since(t0)
	pids := map[string]int{}
	for _, s := range e.Ls() {
		if s.Pid != nil {
			pids[s.ID] = *s.Pid
		}
	}
	keep := make([]*e2e.Follower, sessions)
	slow := make([]*e2e.Follower, sessions)
	for i, id := range ids {
		keep[i] = e2e.StartFollower(e.C, id, 0)
		slow[i] = e2e.SlowFollower(e.C, id, 0, readFor, pause)
	}
	defer func() {
		var wg sync.WaitGroup
		for i := range ids {
			wg.Add(2)
			go func() { keep[i].Stop(); wg.Done() }()
			go func() { slow[i].Stop(); wg.Done() }()
		}
		wg.Wait()
	}()
	t.Logf("%d sessions created in %s, 2 viewers each; running %s (warm-up %s, a sample every %s)", sessions, created.Round(time.Millisecond), duration, warm, sample)

	// The run: sample the server's memory, threads and fds; fail early if
	// a keeping-up viewer or a slow one finds a fault.
	start := time.Now()
	feed.start(start, 50*time.Millisecond)
	var samples []rssSample
	var fds0, thr0 int
	steady := false
	for time.Since(start) < duration {
		time.Sleep(sample)
		st, err := e2e.ReadProc(pid)
		if err != nil {
			t.Fatalf("the server (pid %d): %v", pid, err)
		}
		at := time.Since(start)
		goroutines, heapGoal := serverRuntime(e)
		samples = append(samples, rssSample{at, st.RssKiB, st.Fds, goroutines, heapGoal})
		if st.RssKiB > maxRSS<<10 {
			t.Fatalf("after %s the server's RSS is %d MiB, past TK_SOAK_MAX_RSS (%d MiB); samples so far: %s",
				at.Round(time.Second), st.RssKiB>>10, maxRSS, formatSamples(samples))
		}
		if !steady && at >= warm {
			steady, fds0, thr0 = true, st.Fds, st.Threads
			saveProfile(t, e, "warm")
		}
		for i := range ids {
			for _, f := range []*e2e.Follower{keep[i], slow[i]} {
				if _, _, err := f.State(); err != nil {
					t.Fatalf("viewer of %s after %s: %v", f.Ref, at.Round(time.Second), err)
				}
			}
		}
		if e2e.SoakMode() && len(samples)%6 == 0 {
			t.Logf("%s: server RSS %d KiB, %d threads, %d fds", at.Round(time.Second), st.RssKiB, st.Threads, st.Fds)
		}
	}
	end, err := e2e.ReadProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	saveProfile(t, e, "end")
	holdersKiB, holdersN := 0, 0
	for _, id := range ids {
		if m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", id)); err == nil {
			if st, err := e2e.ReadProc(m.HolderPid); err == nil {
				holdersKiB += int(st.RssKiB)
				holdersN++
			}
		}
	}

	// The writing stops with an END line in each pipe that counts the
	// lines before it; every keeping-up viewer reaches that line; every
	// log holds every line written, once.
	written := feed.stop()
	for i := range ids {
		e2e.WaitFollower(t, keep[i], "the END line", 2*time.Minute, func(_ uint64, ended bool) bool { return ended })
	}
	var lines, logBytes, snapshots uint64
	resynced := 0
	for i, id := range ids {
		log, logEnd := e2e.CheckLog(t, e.C, id)
		if log.Err != nil || !log.Ended {
			t.Fatalf("the log of %s: %v (END line: %v)", id, log.Err, log.Ended)
		}
		if log.Lines != written[i] {
			t.Fatalf("the log of %s holds %d lines; %d were written", id, log.Lines, written[i])
		}
		f := keep[i]
		next, _, _ := f.State()
		f.Mu.Lock()
		flines := f.Check.Lines
		f.Mu.Unlock()
		if flines != log.Lines || next != logEnd {
			t.Fatalf("the keeping-up viewer of %s saw %d lines up to %d; the log holds %d lines up to %d", id, flines, next, log.Lines, logEnd)
		}
		lines += log.Lines
		logBytes += logEnd
		slow[i].Mu.Lock()
		snapshots += uint64(slow[i].Snapshots)
		if slow[i].Snapshots > 0 {
			resynced++
		}
		slow[i].Mu.Unlock()
	}
	for _, s := range e.Ls() {
		if s.State != "running" || s.Pid == nil || *s.Pid != pids[s.ID] {
			t.Fatalf("after the soak %s is %s with pid %v, want running with pid %d", s.ID, s.State, s.Pid, pids[s.ID])
		}
	}

	feed.close() // the children exit

	// Steady state: fds and memory flat. A fit's slope is reported, but
	// judged is the drift, the median of the last third of the samples
	// after warm-up less the median of the first third: a garbage-collected
	// heap of gigabytes swings by a tenth between samples, and a few peaks
	// at one end tilt a fit, not a median.
	var post []rssSample
	for _, s := range samples {
		if s.at >= warm {
			post = append(post, s)
		}
	}
	slope := slopeKiBPerMin(post)
	growth := 0.0
	if len(post) > 1 {
		growth = slope * (post[len(post)-1].at - post[0].at).Minutes()
	}
	rssDrift := drift(post, func(s rssSample) float64 { return float64(s.rssKiB) })
	fdsDrift := drift(post, func(s rssSample) float64 { return float64(s.fds) })
	goDrift := drift(post, func(s rssSample) float64 { return float64(s.goroutines) })
	heapDrift := drift(post, func(s rssSample) float64 { return s.heapGoal })
	lo, hi := samples[0].rssKiB, samples[0].rssKiB
	for _, s := range samples {
		lo, hi = min(lo, s.rssKiB), max(hi, s.rssKiB)
	}
	filling := ""
	if warm < fill {
		filling = fmt.Sprintf(" (the windows are still filling, %s to fill: about %.0f KiB/min of that slope is them, by design)",
			fill.Round(time.Second), float64(sessions*perSec)*60/1024)
	}
	t.Logf("SUMMARY %s (%s, %d sessions x 20 lines/s, %s, %s): %d lines (%.1f MiB) written and logged (the writer at most %s late), none lost or repeated in any log or at any of %d keeping-up viewers; "+
		"%d slow viewers resynced %d times in all (%d of them at least once), exact between snapshots; "+
		"server RSS %d..%d KiB, after warm-up a drift of %+.1f MiB (median of the last third of %d samples less the first's; fit slope %.0f KiB/min, %.1f MiB)%s; "+
		"Go heap goal (twice the live heap) drift %+.1f MiB, at the end %.0f MiB; goroutines %d -> %d (drift %+.0f); "+
		"fds %d -> %d (drift %+.0f), threads %d -> %d; holders' RSS %d KiB on average",
		t.Name(), mode(), sessions, duration, raceMode(), lines, float64(logBytes)/e2e.MiB, feed.late.Round(time.Millisecond), sessions,
		sessions, snapshots, resynced, lo, hi, rssDrift/1024, len(post), slope, growth/1024, filling,
		heapDrift/e2e.MiB, samples[len(samples)-1].heapGoal/e2e.MiB, firstOf(post).goroutines, samples[len(samples)-1].goroutines, goDrift,
		fds0, end.Fds, fdsDrift, thr0, end.Threads, holdersKiB/max(holdersN, 1))
	// The short run's thirds are a few samples each, taken where the slow
	// viewers happen to be in their read, pause and resync cycle: a
	// goroutine each may come or go between them (+26 was seen on a busy
	// machine). Here only a gross leak (one per session a second) fails;
	// a slow one is for the hour of make soak, with the strict bound.
	goLimit := 16.0
	if !e2e.SoakMode() {
		goLimit += float64(sessions)
	}
	if goDrift > goLimit {
		t.Errorf("the server's goroutines grew by %.0f in steady state (medians of the first and last thirds; at most %.0f)", goDrift, goLimit)
	}
	if fdsDrift > 16 {
		t.Errorf("the server's fds grew by %.0f in steady state (medians of the first and last thirds; %d at the warm-up's end, %d at the end)", fdsDrift, fds0, end.Fds)
	}
	if end.Threads > 2*thr0+16 {
		t.Errorf("the server's threads grew from %d to %d in steady state", thr0, end.Threads)
	}
	// Loose: the race detector roughly doubles the server's memory.
	bound := 50.0
	if e2e.RaceEnabled {
		bound = 100
	}
	if rssDrift > bound*1024 {
		t.Errorf("the server's memory grew %.1f MiB after warm-up (medians of the first and last thirds; fit %.0f KiB/min); samples: %s", rssDrift/1024, slope, formatSamples(samples))
	}
	if heapDrift > bound*e2e.MiB {
		t.Errorf("the server's Go heap goal grew %.1f MiB after warm-up (medians of the first and last thirds)", heapDrift/e2e.MiB)
	}
	switch {
	case resynced == 0 && feed.late > duration/4:
		// The writer ran far behind its schedule (a machine busy with
		// other work): output came too slowly to leave a viewer behind.
		t.Logf("no slow viewer was resynced: the writer was %s late, the slow path was not exercised", feed.late.Round(time.Millisecond))
	case resynced == 0:
		t.Errorf("no slow viewer was ever resynced: the soak did not exercise the slow path")
	}
}

func mode() string {
	if e2e.SoakMode() {
		return "soak"
	}
	return "short"
}

func raceMode() string {
	if e2e.RaceEnabled {
		return "-race"
	}
	return "no -race"
}

// parallel runs fn(0..n-1), at most k at a time, and fails the test with
// the first error.
func parallel(t *testing.T, n, k int, fn func(i int) error) {
	t.Helper()
	sem := make(chan struct{}, k)
	errs := make(chan error, n)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- fn(i)
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

type rssSample struct {
	at     time.Duration // since the run began
	rssKiB int64
	fds    int
	// From the server's /metrics: its goroutines, and its Go heap goal
	// (go_memstats_next_gc_bytes: twice the heap live after the last
	// collection, a steadier measure than RSS, which swings with the
	// garbage not yet collected).
	goroutines int
	heapGoal   float64
}

func firstOf(s []rssSample) rssSample {
	if len(s) == 0 {
		return rssSample{}
	}
	return s[0]
}

// serverRuntime reads the server's goroutines and Go heap goal from its
// /metrics.
func serverRuntime(e *e2e.Env) (goroutines int, heapGoal float64) {
	m := e.Metrics()
	return int(m.Value(e.T, "go_goroutines")), m.Value(e.T, "go_memstats_next_gc_bytes")
}

// saveProfile writes the server's heap profile to $TK_SOAK_PROFILES/NAME.heap
// when that is set (make soak: test-artifacts/soak-profiles), for
// `go tool pprof -base warm.heap end.heap bin/termkeep`.
func saveProfile(t *testing.T, e *e2e.Env, name string) {
	dir := os.Getenv("TK_SOAK_PROFILES")
	if dir == "" {
		return
	}
	code, b := e.UnixGet("/debug/pprof/heap")
	if code != http.StatusOK {
		t.Logf("heap profile: %d %s", code, b)
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("heap profile: %v", err)
		return
	}
	path := filepath.Join(dir, name+".heap")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Logf("heap profile: %v", err)
		return
	}
	t.Logf("the server's heap profile (%s) is in %s", name, path)
}

// drift is the median of v over the last third of s less its median over
// the first third (0 with fewer than 3 samples).
func drift(s []rssSample, v func(rssSample) float64) float64 {
	k := len(s) / 3
	if k == 0 {
		return 0
	}
	median := func(part []rssSample) float64 {
		x := make([]float64, len(part))
		for i, p := range part {
			x[i] = v(p)
		}
		slices.Sort(x)
		return (x[(len(x)-1)/2] + x[len(x)/2]) / 2
	}
	return median(s[len(s)-k:]) - median(s[:k])
}

// slopeKiBPerMin fits rss = a + b·t by least squares and returns b.
func slopeKiBPerMin(s []rssSample) float64 {
	if len(s) < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for _, p := range s {
		x, y := p.at.Minutes(), float64(p.rssKiB)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	n := float64(len(s))
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// formatSamples lists samples as "seconds:MiB", at most 40 of them.
func formatSamples(s []rssSample) string {
	step := max(len(s)/40, 1)
	var b strings.Builder
	for i := 0; i < len(s); i += step {
		fmt.Fprintf(&b, "%.0fs:%.0f ", s[i].at.Seconds(), float64(s[i].rssKiB)/1024)
	}
	return strings.TrimSpace(b.String()) + " (MiB)"
}

// feeder writes the soak's lines (e2e.AppendLine) into each session's named
// pipe, one line a period per session, the sessions' phases spread evenly
// over the period.
type feeder struct {
	t       *testing.T
	dir     string
	pad     int
	pipes   []*os.File
	written []uint64 // lines written, per session
	late    time.Duration
	started bool
	halt    sync.Once
	quit    chan struct{}
	done    chan struct{}
}

func newFeeder(t *testing.T, n, pad int) *feeder {
	f := &feeder{t: t, dir: t.TempDir(), pad: pad, pipes: make([]*os.File, n), written: make([]uint64, n),
		quit: make(chan struct{}), done: make(chan struct{})}
	for i := range n {
		if err := syscall.Mkfifo(f.path(i), 0o600); err != nil {
			t.Fatalf("mkfifo: %v", err)
		}
		// Opened read-write, the pipe never blocks the open and has a
		// writer until close, so cat waits for lines rather than ending.
		p, err := os.OpenFile(f.path(i), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.pipes[i] = p
	}
	t.Cleanup(f.close)
	return f
}

func (f *feeder) path(i int) string { return filepath.Join(f.dir, strconv.Itoa(i)) }

// start writes from t0 on, until stop or close.
func (f *feeder) start(t0 time.Time, period time.Duration) {
	f.started = true
	go f.run(t0, period)
}

func (f *feeder) run(t0 time.Time, period time.Duration) {
	defer close(f.done)
	var buf []byte
	for n := 0; ; n++ {
		select {
		case <-f.quit: // a writer behind its schedule never sleeps below
			return
		default:
		}
		for i, p := range f.pipes {
			due := t0.Add(time.Duration(n)*period + time.Duration(i)*period/time.Duration(len(f.pipes)))
			if d := time.Until(due); d > time.Millisecond {
				select {
				case <-f.quit:
					return
				case <-time.After(d):
				}
			}
			f.late = max(f.late, time.Since(due))
			buf = e2e.AppendLine(buf[:0], f.written[i], f.pad)
			if _, err := p.Write(buf); err != nil {
				f.t.Errorf("write to session %d's pipe: %v", i, err)
				return
			}
			f.written[i]++
		}
	}
}

// stop ends the writing with an END line in every pipe and returns how
// many lines each session was given. The pipes stay open (the children
// live on) until close.
func (f *feeder) stop() []uint64 {
	f.halt.Do(f.halt1)
	for i, p := range f.pipes {
		if _, err := fmt.Fprintf(p, "END %d\r\n", f.written[i]); err != nil {
			f.t.Errorf("write to session %d's pipe: %v", i, err)
		}
	}
	return f.written
}

func (f *feeder) halt1() {
	close(f.quit)
	if f.started {
		<-f.done
	}
}

// close closes the pipes: each cat reads to the end and exits.
func (f *feeder) close() {
	f.halt.Do(f.halt1)
	for i, p := range f.pipes {
		if p != nil {
			p.Close()
			f.pipes[i] = nil
		}
	}
}
