package crashloop

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// crashFault is what a crash loop does to the server each round.
type crashFault struct {
	name   string
	rounds int
	// hit does it; it returns once a server answers again.
	hit func(e *e2e.Env, rng *rand.Rand)
}

// The server is SIGKILLed at random moments and started again while a
// session prints lines in bursts (4 MiB/s at most): 10 times here, 100
// under `make soak`. The log holds every line once, in order; the child is
// the same process under the same holder; a viewer that re-attached after
// each death with the offset it had reached saw every line once.
func TestCrashLoop(t *testing.T) {
	e2e.SkipShort(t)
	rounds := 10
	if e2e.SoakMode() {
		rounds = 100
	}
	runCrashLoop(t, crashFault{name: "SIGKILL", rounds: rounds, hit: func(e *e2e.Env, rng *rand.Rand) {
		e.KillServer()
		time.Sleep(time.Duration(rng.Intn(300)) * time.Millisecond) // output goes on with no server
		e.StartServer()
	}})
}

// The server hangs (SIGSTOP, then SIGCONT 2 s later; 5 times 5 s under
// `make soak`) while a session prints: the same checks as TestCrashLoop.
// The viewer's connection survives the hang, so it receives the backlog on
// the same stream.
func TestCrashLoopHung(t *testing.T) {
	e2e.SkipShort(t)
	rounds, pause := 1, 2*time.Second
	if e2e.SoakMode() {
		rounds, pause = 5, 5*time.Second
	}
	runCrashLoop(t, crashFault{name: "SIGSTOP " + pause.String(), rounds: rounds, hit: func(e *e2e.Env, rng *rand.Rand) {
		p := e.Srv.Cmd.Process
		if err := p.Signal(syscall.SIGSTOP); err != nil {
			e.T.Fatal(err)
		}
		time.Sleep(pause)
		if err := p.Signal(syscall.SIGCONT); err != nil {
			e.T.Fatal(err)
		}
		e2e.WaitFor(e.T, 20*time.Second, "the server to answer after SIGCONT", func() bool {
			_, err := e.C.Health(context.Background())
			return err == nil
		})
	}})
}

// A hung server is not waited for: the holder paces its reading of the pty
// by a server that is far behind only while that server takes output, so a
// child flooding 40 MB (five times the pace's bound) while the server is
// stopped runs to its end, and the server takes all of it once it runs again.
func TestHungServerDoesNotHoldTheChild(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	dir := t.TempDir()
	start, done := filepath.Join(dir, "go"), filepath.Join(dir, "done")
	const size = 40_000_000
	id := strings.TrimSpace(e.MustTk("new", "--name", "flood", "--", "sh", "-c",
		fmt.Sprintf("echo ready; while [ ! -e %s ]; do sleep 0.05; done; head -c %d /dev/zero | tr '\\0' x; touch %s; sleep 600", start, size, done)))
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "ready", "--timeout", "30s"); code != 0 {
		t.Fatalf("the session does not start: %d %s", code, errs)
	}
	p := e.Srv.Cmd.Process
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	defer p.Signal(syscall.SIGCONT)
	if err := os.WriteFile(start, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e2e.WaitFor(t, 60*time.Second, "the child to finish its flood with the server stopped", func() bool {
		_, err := os.Stat(done)
		return err == nil
	})
	t.Logf("the child printed %d bytes and finished %v after the server stopped", size, time.Since(stopped).Round(time.Millisecond))
	if err := p.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	e2e.WaitFor(t, 30*time.Second, "the server to take the whole flood", func() bool {
		s, err := e.C.Get(context.Background(), id)
		return err == nil && s.End >= size
	})
}

func runCrashLoop(t *testing.T, fault crashFault) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	e := e2e.NewEnv(t)
	// Everything printed stays in the log (the check reads it from 0). The
	// follower must see every byte, so the lag policy (a viewer more than a
	// queue behind is skipped ahead with a snapshot) is kept out of the way:
	// after a hang the backlog reaches it in one burst, and on a loaded
	// machine a -race follower is barely faster than the output. That policy
	// is TestStalledViewerIsResynced's and TestSoak's subject.
	// TK_CHAOS_VIEWER_QUEUE=1MiB (the default) puts it back.
	queue := cmp.Or(os.Getenv("TK_CHAOS_VIEWER_QUEUE"), "256MiB")
	e.ServerArgs = []string{"--log-retention", "2GiB", "--viewer-queue", queue}
	e.StartServer()
	const pad = 40 // 62-byte lines
	id := e.NewLines("crash", "TK_BURST=64", "TK_EVERY=1ms", "TK_PAD="+strconv.Itoa(pad))
	before := e.Session(id)
	if before.Pid == nil {
		t.Fatalf("the session has no pid: %+v", before)
	}
	dir := filepath.Join(e.Dir, "sessions", id)
	meta, err := sessiondir.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := e2e.StartFollower(e.C, id, 0)
	defer f.Stop()
	e2e.WaitFollower(t, f, "the first lines", 30*time.Second, func(next uint64, _ bool) bool { return next > 0 })

	start := time.Now()
	var ends []uint64
	for range fault.rounds {
		// A random moment: the server has been up 100 ms to 1.5 s.
		time.Sleep(time.Duration(100+rng.Intn(1400)) * time.Millisecond)
		if _, _, err := f.State(); err != nil {
			break
		}
		ends = append(ends, e.Session(id).End)
		fault.hit(e, rng)
	}
	faulty := time.Since(start)

	// The follower catches up with the server's end, then the child stops
	// and says how many lines it printed.
	end := e.Session(id).End
	e2e.WaitFollower(t, f, "the follower to catch up", 2*time.Minute, func(next uint64, _ bool) bool { return next >= end })
	e.MustTk("send", "--no-enter", id, "s")
	e2e.WaitFollower(t, f, "the END line", 2*time.Minute, func(_ uint64, ended bool) bool { return ended })
	fnext, _, _ := f.State()
	f.Stop()

	log, logEnd := e2e.CheckLog(t, e.C, id)
	if log.Err != nil {
		t.Fatalf("the log: %v", log.Err)
	}
	if !log.Ended {
		t.Fatalf("the log has no END line (%d lines, end %d)", log.Lines, logEnd)
	}
	f.Mu.Lock()
	flines, attaches, waits := f.Check.Lines, f.Attaches, slices.Clone(f.AttachWait)
	f.Mu.Unlock()
	if flines != log.Lines || fnext != logEnd {
		t.Fatalf("the follower saw %d lines up to offset %d; the log holds %d lines up to %d", flines, fnext, log.Lines, logEnd)
	}

	after := e.Session(id)
	if after.State != "running" || after.Pid == nil || *after.Pid != *before.Pid {
		t.Fatalf("after the loop: state %s pid %v, want running with pid %d", after.State, after.Pid, *before.Pid)
	}
	if m, err := sessiondir.ReadMeta(dir); err != nil || m.HolderPid != meta.HolderPid || m.Pid != meta.Pid {
		t.Fatalf("meta.json after the loop: %+v %v; want holder %d child %d", m, err, meta.HolderPid, meta.Pid)
	}
	if err := syscall.Kill(meta.HolderPid, 0); err != nil {
		t.Fatalf("holder %d is gone: %v", meta.HolderPid, err)
	}
	e.MustTk("send", "--no-enter", id, "q")
	if _, errs, code := e.Tk("wait", id, "--exit", "--timeout", "30s"); code != 0 {
		t.Fatalf("wait --exit: %d %s", code, errs)
	}
	sort.Slice(waits, func(i, j int) bool { return waits[i] < waits[j] })
	median := time.Duration(0)
	if len(waits) > 0 {
		median = waits[len(waits)/2]
	}
	var maxWait time.Duration
	if len(waits) > 0 {
		maxWait = waits[len(waits)-1]
	}
	t.Logf("SUMMARY %s: %s x%d over %s (seed %d, viewer queue %s): %d lines, %.1f MiB logged, each once and in order in the log and at the follower; "+
		"the follower attached %d times (re-attach after a drop: median %s, max %s); child pid %d and holder pid %d unchanged; log end at each fault: %v",
		t.Name(), fault.name, len(ends), faulty.Round(time.Second), seed, queue, log.Lines, float64(logEnd)/e2e.MiB,
		attaches, median.Round(time.Millisecond), maxWait.Round(time.Millisecond), *before.Pid, meta.HolderPid, mibs(ends))
}

// mibs formats offsets in MiB, for a summary line.
func mibs(offs []uint64) string {
	var b strings.Builder
	for i, o := range offs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f", float64(o)/e2e.MiB)
		if i == 19 && len(offs) > 20 {
			fmt.Fprintf(&b, " … (%d more)", len(offs)-20)
			break
		}
	}
	return "[" + b.String() + "] MiB"
}

// Holders are SIGKILLed in the middle of their writes: two sessions while
// they print as fast as they can (one of them then also has its last
// segment torn mid-record and zero-filled, as a machine crash may leave
// it), and several while a viewer resizes them in a storm, each killed the
// moment its meta.json's temporary file appears. Each becomes interrupted;
// a new server reads its log, which holds every line before the tear and
// nothing else; every meta.json parses, as the old or the new version;
// other sessions print and echo on.
func TestHolderKilledMidWrite(t *testing.T) {
	e2e.SkipShort(t)
	metaRounds := 3
	if e2e.SoakMode() {
		metaRounds = 20
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	t0 := time.Now()
	e := e2e.NewEnv(t)
	e.StartServer()
	other := strings.TrimSpace(e.MustTk("new", "--name", "other", "--", "cat"))
	ticker := e.NewLines("ticker", "TK_EVERY=50ms", "TK_PAD=20")
	tickerPid := *e.Session(ticker).Pid
	tf := e2e.StartFollower(e.C, ticker, 0)
	defer tf.Stop()
	echo := func(word string) {
		t.Helper()
		e.MustTk("send", other, word)
		if _, errs, code := e.Tk("wait", other, "--from", "start", "--output", word, "--timeout", "30s"); code != 0 {
			t.Fatalf("the other session does not echo %s: %d %s", word, code, errs)
		}
	}
	holderOf := func(id string) sessiondir.Meta {
		t.Helper()
		m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", id))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	interrupted := func(id string) {
		t.Helper()
		e2e.WaitFor(t, 30*time.Second, id+" to be interrupted", func() bool { return e.Session(id).State == "interrupted" })
	}

	// Segments: heavy output, SIGKILL past 9 MiB (4 MiB segments: three of them).
	const pad = 40
	seen := map[string]uint64{}
	var heavy []string
	for _, name := range []string{"seg", "torn"} {
		heavy = append(heavy, e.NewLines(name, "TK_BURST=1024", "TK_PAD="+strconv.Itoa(pad)))
	}
	for _, id := range heavy {
		m := holderOf(id)
		e2e.WaitFor(t, 60*time.Second, id+" to print 9 MiB", func() bool { return e.Session(id).End > 9*e2e.MiB })
		seen[id] = e.Session(id).End
		syscall.Kill(m.HolderPid, syscall.SIGKILL)
	}
	for _, id := range heavy {
		interrupted(id)
	}
	t.Logf("%s: segment writers killed", time.Since(t0).Round(time.Millisecond))
	// A tear: the last record cut short and zeros after it.
	torn := heavy[1]
	segs, _ := filepath.Glob(filepath.Join(e.Dir, "sessions", torn, sessiondir.LogDir, "*.seg"))
	if len(segs) < 3 {
		t.Fatalf("%d segments for %d bytes, want at least 3", len(segs), seen[torn])
	}
	last := segs[len(segs)-1]
	st, err := os.Stat(last)
	if err != nil {
		t.Fatal(err)
	}
	cut := int64(1 + rng.Intn(4096))
	zeros := 1 + rng.Intn(512)
	if err := os.Truncate(last, max(st.Size()-cut, 0)); err != nil {
		t.Fatal(err)
	}
	if f, err := os.OpenFile(last, os.O_WRONLY|os.O_APPEND, 0); err == nil {
		f.Write(make([]byte, zeros))
		f.Close()
	}
	echo("after-segment-kills")

	// meta.json: a storm of resizes, each rewriting it (temporary file,
	// fsync, rename); the holder is killed when the temporary file shows.
	sizes := [][2]uint16{{80, 24}, {100, 30}, {120, 40}, {90, 25}}
	var metas []string
	caught, leftovers := 0, 0
	for round := range metaRounds {
		id := strings.TrimSpace(e.MustTk("new", "--name", "meta"+strconv.Itoa(round), "--size", "80x24", "--", "cat"))
		metas = append(metas, id)
		dir := filepath.Join(e.Dir, "sessions", id)
		m := holderOf(id)
		v := e2e.OpenViewer(t, e, id, wire.Hello{From: wire.FromEnd, Cols: 80, Rows: 24})
		stop := make(chan struct{})
		go func() {
			for i := 1; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s := sizes[i%len(sizes)]
				if v.S.Fit(s[0], s[1]) != nil {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
		deadline := time.Now().Add(10 * time.Second)
		hit := false
		for !hit && time.Now().Before(deadline) {
			ents, _ := os.ReadDir(dir)
			for _, ent := range ents {
				if strings.HasPrefix(ent.Name(), "."+sessiondir.MetaFile+".") {
					hit = true
					break
				}
			}
		}
		syscall.Kill(m.HolderPid, syscall.SIGKILL)
		close(stop)
		if hit {
			caught++
		}
		interrupted(id)
		got, err := sessiondir.ReadMeta(dir)
		if err != nil {
			b, _ := os.ReadFile(filepath.Join(dir, sessiondir.MetaFile))
			t.Fatalf("meta.json of %s after its holder was killed mid-write: %v\n%q", id, err, b)
		}
		if got.HolderPid != m.HolderPid || got.Pid != m.Pid || got.EndedAt != nil ||
			!slices.Contains(sizes, [2]uint16{got.Cols, got.Rows}) {
			t.Fatalf("meta.json of %s: %+v; want holder %d child %d, no end, a size from %v", id, got, m.HolderPid, m.Pid, sizes)
		}
		ents, _ := os.ReadDir(dir)
		for _, ent := range ents {
			if strings.HasPrefix(ent.Name(), "."+sessiondir.MetaFile+".") {
				leftovers++
			}
		}
	}
	echo("after-meta-kills")
	t.Logf("%s: meta.json writers killed", time.Since(t0).Round(time.Millisecond))

	// A new server reads all of it.
	e.KillServer()
	e.StartServer()
	for _, id := range append(slices.Clone(heavy), metas...) {
		if s := e.Session(id); s.State != "interrupted" {
			t.Fatalf("after a restart %s is %s, want interrupted", id, s.State)
		}
	}
	t.Logf("%s: server restarted", time.Since(t0).Round(time.Millisecond))
	lost := map[string]uint64{}
	for _, id := range heavy {
		chk, end := e2e.CheckLog(t, e.C, id)
		if chk.Err != nil {
			t.Fatalf("the log of %s after its holder was killed: %v", id, chk.Err)
		}
		if chk.Ended {
			t.Fatalf("the log of %s has an END line its child never printed", id)
		}
		// The unfinished last line is the start of the line that was due.
		if want := e2e.AppendLine(nil, chk.Next, pad); !bytes.HasPrefix(want, chk.Partial) {
			t.Fatalf("the log of %s ends in %q, which does not begin line %d (%q)", id, chk.Partial, chk.Next, want)
		}
		if id != torn && end < seen[id] {
			t.Fatalf("the log of %s ends at %d, but the server had received up to %d", id, end, seen[id])
		}
		if id == torn {
			lost[id] = seen[id] - min(seen[id], end)
		}
		// capture --raw (the CLI's path) returns the same bytes.
		out := e.MustTk("capture", "--raw", id)
		if uint64(len(out)) != end {
			t.Fatalf("capture --raw %s: %d bytes, the log ends at %d", id, len(out), end)
		}
		t.Logf("%s: %d whole lines (%.1f MiB) before the kill, then %d bytes of the line due", e.Session(id).Name, chk.Lines, float64(end)/e2e.MiB, len(chk.Partial))
	}
	if s := e.Session(ticker); s.State != "running" || s.Pid == nil || *s.Pid != tickerPid {
		t.Fatalf("the ticker session: %+v, want running with pid %d", s, tickerPid)
	}
	echo("after-restart")
	t.Logf("%s: logs checked", time.Since(t0).Round(time.Millisecond))
	end := e.Session(ticker).End
	e2e.WaitFollower(t, tf, "the ticker's follower to catch up", time.Minute, func(next uint64, _ bool) bool { return next >= end })
	e.MustTk("send", "--no-enter", ticker, "s")
	e2e.WaitFollower(t, tf, "the ticker's END line", time.Minute, func(_ uint64, ended bool) bool { return ended })
	tlog, tend := e2e.CheckLog(t, e.C, ticker)
	tnext, _, _ := tf.State()
	if tlog.Err != nil || !tlog.Ended || tlog.Lines != tf.Check.Lines || tnext != tend {
		t.Fatalf("the ticker: log %d lines to %d (%v, ended %v), follower %d lines to %d", tlog.Lines, tend, tlog.Err, tlog.Ended, tf.Check.Lines, tnext)
	}
	t.Logf("SUMMARY %s: 2 holders SIGKILLed mid-output (past %.1f MiB and %.1f MiB), one log then torn (cut %d bytes, %d zeros appended; the tear cost %d bytes the server had received); "+
		"%d holders SIGKILLed in a resize storm, %d of them while meta.json's temporary file existed (%d temporary files left behind), every meta.json whole; "+
		"the ticker printed %d lines through it all, each once at its follower; the other session echoed after each step",
		t.Name(), float64(seen[heavy[0]])/e2e.MiB, float64(seen[torn])/e2e.MiB, cut, zeros, lost[torn], metaRounds, caught, leftovers, tlog.Lines)
}
