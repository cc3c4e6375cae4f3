package e2e

// Chaos: the server SIGKILLed or stopped at random moments while a session
// prints numbered lines, and holders SIGKILLed in the middle of writing
// their log or their meta.json. What must hold afterwards is in
// docs/reliability.md. `make soak` runs the long versions (TK_SOAK=1).

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/term"

	"termkeep/internal/client"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// The "lines" child belongs to this file, and childMain (e2e_test.go) does
// not know it: it is dispatched here, before TestMain runs.
func init() {
	if os.Getenv("TK_CHILD") == "lines" {
		os.Exit(linesChild())
	}
}

// soakMode reports whether the long versions run (`make soak`).
func soakMode() bool { return os.Getenv("TK_SOAK") != "" }

// skipShort skips a chaos or soak test under -short (`make test-short`):
// each takes tens of seconds.
func skipShort(t *testing.T) {
	if testing.Short() && !soakMode() {
		t.Skip("a chaos or soak test: not with -short")
	}
}

// linesChild prints numbered lines (see appendLine) with its tty in raw
// mode, so the log holds exactly the bytes it wrote: TK_BURST lines per
// write, a write every TK_EVERY (0: as fast as the pty takes them), until
// TK_LINES lines (0: no limit) or an 's' on its input. Then it prints
// "END <lines printed>" and exits on a 'q' (or when its input ends).
func linesChild() int {
	limit, _ := strconv.ParseUint(os.Getenv("TK_LINES"), 10, 64)
	burst, _ := strconv.Atoi(os.Getenv("TK_BURST"))
	burst = max(burst, 1)
	pad, _ := strconv.Atoi(os.Getenv("TK_PAD"))
	every, _ := time.ParseDuration(os.Getenv("TK_EVERY"))
	if _, err := term.MakeRaw(0); err != nil {
		fmt.Fprintln(os.Stderr, "raw:", err)
		return 3
	}
	var stop atomic.Bool
	quit := make(chan struct{})
	go func() {
		defer close(quit)
		var b [1]byte
		for {
			if _, err := os.Stdin.Read(b[:]); err != nil {
				return
			}
			switch b[0] {
			case 's':
				stop.Store(true)
			case 'q':
				stop.Store(true)
				return
			}
		}
	}()
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	var buf []byte
	var seq uint64
	for !stop.Load() && (limit == 0 || seq < limit) {
		buf = buf[:0]
		for i := 0; i < burst && (limit == 0 || seq < limit); i++ {
			buf = appendLine(buf, seq, pad)
			seq++
		}
		if _, err := os.Stdout.Write(buf); err != nil {
			return 4
		}
		if tick != nil {
			<-tick
		}
	}
	fmt.Fprintf(os.Stdout, "END %d\r\n", seq)
	<-quit
	return 0
}

// appendLine appends line seq as linesChild prints it: ten digits, a space,
// pad letters, a space, the CRC-32 (IEEE) of everything before that last
// space in eight hex digits, CR LF. A line is therefore checkable on its own:
// a torn, garbled or misplaced one shows.
func appendLine(b []byte, seq uint64, pad int) []byte {
	start := len(b)
	b = fmt.Appendf(b, "%010d ", seq)
	for range pad {
		b = append(b, byte('a'+seq%26))
	}
	sum := crc32.ChecksumIEEE(b[start:])
	return fmt.Appendf(b, " %08x\r\n", sum)
}

// lineChecker checks a stream of linesChild's output fed to it in pieces of
// any size: every line whole and intact, numbered one more than the one
// before (no gap, no duplicate), and at most one END line, last, counting
// the lines before it. After a snapshot (skip) it resumes at the next whole
// line, whatever its number.
type lineChecker struct {
	next    uint64 // the number the next line must have
	off     uint64 // stream offset of the first byte of partial
	partial []byte // an unfinished line
	loose   bool   // the next whole line sets next (the stream starts, or skipped)
	drop    bool   // drop bytes up to the next line end (a skip landed mid-line)
	ended   bool   // the END line came
	lines   uint64 // whole lines checked
	err     error  // the first fault; nothing is checked after it
}

// skip says the stream continues at offset off after a gap it was told of
// (a snapshot): the next bytes may start in the middle of a line.
func (c *lineChecker) skip(off uint64) {
	c.off, c.partial, c.loose, c.drop = off, c.partial[:0], true, true
}

func (c *lineChecker) write(p []byte) {
	for len(p) > 0 && c.err == nil {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.partial = append(c.partial, p...)
			if len(c.partial) > 1<<16 {
				c.fail("%d bytes without a line end", len(c.partial))
			}
			return
		}
		line := p[:i+1]
		if len(c.partial) > 0 {
			c.partial = append(c.partial, line...)
			line = c.partial
		}
		if c.drop {
			c.drop = false
		} else {
			c.line(line)
		}
		c.off += uint64(len(line))
		c.partial = c.partial[:0]
		p = p[i+1:]
	}
}

func (c *lineChecker) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("at offset %d: %s", c.off, fmt.Sprintf(format, args...))
	}
}

func (c *lineChecker) line(l []byte) {
	if c.ended {
		c.fail("%q after the END line", l)
		return
	}
	body, ok := bytes.CutSuffix(l, []byte("\r\n"))
	if !ok {
		c.fail("line %q does not end in CR LF", l)
		return
	}
	if n, ok := bytes.CutPrefix(body, []byte("END ")); ok {
		count, err := strconv.ParseUint(string(n), 10, 64)
		switch {
		case err != nil:
			c.fail("bad END line %q", l)
		case !c.loose && count != c.next:
			c.fail("END says %d lines, the stream had %d", count, c.next)
		}
		c.ended = true
		return
	}
	seq, ok := parseLine(body)
	if !ok {
		c.fail("garbled line %q (want line %d)", l, c.next)
		return
	}
	switch {
	case c.loose:
		c.loose = false
	case seq < c.next:
		c.fail("line %d again after line %d (a duplicate)", seq, c.next-1)
		return
	case seq > c.next:
		c.fail("line %d after line %d: lines %d to %d are missing (a gap)", seq, int64(c.next)-1, c.next, seq-1)
		return
	}
	c.next = seq + 1
	c.lines++
}

// parseLine returns the number of a line (without its CR LF) that
// appendLine made, and whether it is one.
func parseLine(body []byte) (uint64, bool) {
	if len(body) < 10+1+1+8 || body[10] != ' ' || body[len(body)-9] != ' ' {
		return 0, false
	}
	seq, err := strconv.ParseUint(string(body[:10]), 10, 64)
	if err != nil {
		return 0, false
	}
	sum, err := strconv.ParseUint(string(body[len(body)-8:]), 16, 32)
	if err != nil || uint32(sum) != crc32.ChecksumIEEE(body[:len(body)-9]) {
		return 0, false
	}
	return seq, true
}

// checkLog reads a session's whole log (GET output from 0) through a
// lineChecker and returns it with the log's end offset.
func checkLog(t *testing.T, c *client.Client, ref string) (*lineChecker, uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	zero := uint64(0)
	out, err := c.Output(ctx, ref, &zero)
	if err != nil {
		t.Fatalf("output of %s: %v", ref, err)
	}
	defer out.Close()
	if out.First != 0 {
		t.Fatalf("the log of %s starts at %d: retention dropped its beginning", ref, out.First)
	}
	chk := &lineChecker{}
	buf := make([]byte, 1<<20)
	var n uint64
	for {
		k, err := out.Read(buf)
		chk.write(buf[:k])
		n += uint64(k)
		if err != nil {
			break
		}
	}
	if n != out.End {
		t.Fatalf("output of %s: %d bytes, the header says the log ends at %d", ref, n, out.End)
	}
	return chk, out.End
}

// follower is a viewer that follows a session across server deaths, as
// `termkeep attach` does: it checks that every output frame begins where
// the one before ended, feeds the bytes to a lineChecker, and after a
// dropped connection attaches again with Hello.From = the offset after the
// last byte it got. A snapshot or a gap frame is a failure (it means bytes
// it did not see), unless allowSkip.
type follower struct {
	c         *client.Client
	ref       string
	allowSkip bool
	// A slow follower (see slowFollower) acks what it has read and stops
	// reading for pause after each readFor.
	readFor, pause time.Duration
	quit           chan struct{} // closed by stop
	done           chan struct{} // closed when run returns

	mu         sync.Mutex // guards the fields below
	next       uint64     // offset after the last byte received
	check      lineChecker
	attaches   int             // connections made, the first included
	attachWait []time.Duration // from each dropped connection to the next attach
	snapshots  int             // snapshots that moved it ahead (allowSkip)
	err        error
	stream     *client.Stream
	stopped    bool
}

func startFollower(c *client.Client, ref string, from uint64) *follower {
	f := newFollower(c, ref, from)
	go f.run()
	return f
}

// slowFollower starts a follower that behaves like a browser on a slow
// link: it acks what it has read, and after each readFor it stops reading
// for pause, so it falls behind and may be skipped to the present with a
// snapshot. Between snapshots its bytes must still be exact.
func slowFollower(c *client.Client, ref string, from uint64, readFor, pause time.Duration) *follower {
	f := newFollower(c, ref, from)
	f.allowSkip, f.readFor, f.pause = true, readFor, pause
	go f.run()
	return f
}

func newFollower(c *client.Client, ref string, from uint64) *follower {
	f := &follower{c: c, ref: ref, next: from, quit: make(chan struct{}), done: make(chan struct{})}
	f.check.off = from
	if from > 0 {
		f.check.skip(from)
	}
	return f
}

// run attaches, reads and re-attaches until the session ends, the follower
// fails, or stop is called.
func (f *follower) run() {
	defer close(f.done)
	var down time.Time // when the last connection dropped
	for {
		f.mu.Lock()
		from, stopped := f.next, f.stopped
		f.mu.Unlock()
		if stopped {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := f.c.Attach(ctx, f.ref, wire.Hello{Role: wire.RoleViewer, From: int64(from)})
		cancel()
		if err != nil {
			var re *wire.RemoteError
			if errors.As(err, &re) && re.Code == wire.CodeUnavailable && strings.Contains(re.Message, "beyond") {
				f.fail("attach from %d: %v", from, err)
				return
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		f.mu.Lock()
		f.attaches++
		if !down.IsZero() {
			f.attachWait = append(f.attachWait, time.Since(down))
		}
		f.stream = s
		stopped = f.stopped
		f.mu.Unlock()
		if stopped {
			s.Close()
			return
		}
		if s.Welcome.Start != from {
			f.fail("welcome starts at %d, want %d (resume %s)", s.Welcome.Start, from, s.Welcome.Resume)
			s.Close()
			return
		}
		if end := f.read(s); end {
			return
		}
		s.Close()
		down = time.Now()
	}
}

// read consumes one connection; it reports whether following is over.
func (f *follower) read(s *client.Stream) (over bool) {
	cycle := time.Now()
	for {
		if f.pause > 0 {
			f.mu.Lock()
			next := f.next
			f.mu.Unlock()
			s.Send(func(w *wire.Writer) error { return w.Uint64(wire.TypeAck, next) })
			if time.Since(cycle) >= f.readFor {
				select {
				case <-time.After(f.pause):
				case <-f.quit:
				}
				cycle = time.Now()
			}
		}
		fr, err := s.Next()
		if err != nil {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.stopped
		}
		f.mu.Lock()
		switch fr.Type {
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(fr.Payload)
			if off != f.next {
				f.mu.Unlock()
				f.fail("output frame at %d, want %d (a gap or a duplicate)", off, f.next)
				return true
			}
			f.check.write(data)
			f.next += uint64(len(data))
			if f.check.err != nil {
				f.mu.Unlock()
				return true
			}
		case wire.TypeSnapshot:
			off, _, _ := wire.ParseOutput(fr.Payload)
			if !f.allowSkip {
				f.mu.Unlock()
				f.fail("resynced with a snapshot at %d, %d bytes past what it had", off, off-f.next)
				return true
			}
			if off != f.next {
				f.snapshots++
				f.check.skip(off)
				f.next = off
			}
		case wire.TypeGap:
			from, to, _ := wire.ParseGap(fr.Payload)
			f.mu.Unlock()
			f.fail("gap frame [%d, %d)", from, to)
			return true
		case wire.TypeExit:
			f.mu.Unlock()
			return true
		}
		f.mu.Unlock()
	}
}

func (f *follower) fail(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = fmt.Errorf(format, args...)
	}
}

// state returns where the follower is and its first fault, the checker's
// included.
func (f *follower) state() (next uint64, ended bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.next, f.check.ended, cmpErr(f.err, f.check.err)
}

func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// stop ends following and waits for run to return.
func (f *follower) stop() {
	f.mu.Lock()
	if !f.stopped {
		close(f.quit)
	}
	f.stopped = true
	if f.stream != nil {
		f.stream.Close()
	}
	f.mu.Unlock()
	<-f.done
}

// waitFollower waits until f has reached offset at least end (or failed).
func waitFollower(t *testing.T, f *follower, what string, d time.Duration, cond func(next uint64, ended bool) bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		next, ended, err := f.state()
		if err != nil {
			t.Fatalf("follower of %s: %v", f.ref, err)
		}
		if cond(next, ended) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("follower of %s: timed out after %s waiting for %s (at offset %d)", f.ref, d, what, next)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// newLines starts a session running linesChild with the given TK_*
// settings and returns its id.
func (e *env) newLines(name string, settings ...string) string {
	e.t.Helper()
	args := []string{"new", "--name", name, "--env", "TK_CHILD=lines"}
	for _, s := range settings {
		args = append(args, "--env", s)
	}
	return strings.TrimSpace(e.mustTk(append(args, "--", selfBin)...))
}

// crashFault is what a crash loop does to the server each round.
type crashFault struct {
	name   string
	rounds int
	// hit does it; it returns once a server answers again.
	hit func(e *env, rng *rand.Rand)
}

// The server is SIGKILLed at random moments and started again while a
// session prints lines in bursts (4 MiB/s at most): 10 times here, 100
// under `make soak`. The log holds every line once, in order; the child is
// the same process under the same holder; a viewer that re-attached after
// each death with the offset it had reached saw every line once.
func TestCrashLoop(t *testing.T) {
	skipShort(t)
	rounds := 10
	if soakMode() {
		rounds = 100
	}
	runCrashLoop(t, crashFault{name: "SIGKILL", rounds: rounds, hit: func(e *env, rng *rand.Rand) {
		e.killServer()
		time.Sleep(time.Duration(rng.Intn(300)) * time.Millisecond) // output goes on with no server
		e.startServer()
	}})
}

// The server hangs (SIGSTOP, then SIGCONT 2 s later; 5 times 5 s under
// `make soak`) while a session prints: the same checks as TestCrashLoop.
// The viewer's connection survives the hang, so it receives the backlog on
// the same stream.
func TestCrashLoopHung(t *testing.T) {
	skipShort(t)
	rounds, pause := 1, 2*time.Second
	if soakMode() {
		rounds, pause = 5, 5*time.Second
	}
	runCrashLoop(t, crashFault{name: "SIGSTOP " + pause.String(), rounds: rounds, hit: func(e *env, rng *rand.Rand) {
		p := e.srv.cmd.Process
		if err := p.Signal(syscall.SIGSTOP); err != nil {
			e.t.Fatal(err)
		}
		time.Sleep(pause)
		if err := p.Signal(syscall.SIGCONT); err != nil {
			e.t.Fatal(err)
		}
		waitFor(e.t, 20*time.Second, "the server to answer after SIGCONT", func() bool {
			_, err := e.c.Health(context.Background())
			return err == nil
		})
	}})
}

// A hung server is not waited for: the holder paces its reading of the pty
// by a server that is far behind only while that server takes output, so a
// child flooding 40 MB (five times the pace's bound) while the server is
// stopped runs to its end, and the server takes all of it once it runs again.
func TestHungServerDoesNotHoldTheChild(t *testing.T) {
	e := newEnv(t)
	e.startServer()
	dir := t.TempDir()
	start, done := filepath.Join(dir, "go"), filepath.Join(dir, "done")
	const size = 40_000_000
	id := strings.TrimSpace(e.mustTk("new", "--name", "flood", "--", "sh", "-c",
		fmt.Sprintf("echo ready; while [ ! -e %s ]; do sleep 0.05; done; head -c %d /dev/zero | tr '\\0' x; touch %s; sleep 600", start, size, done)))
	if _, errs, code := e.tk("wait", id, "--output", "ready", "--timeout", "30s"); code != 0 {
		t.Fatalf("the session does not start: %d %s", code, errs)
	}
	p := e.srv.cmd.Process
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	defer p.Signal(syscall.SIGCONT)
	if err := os.WriteFile(start, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the child to finish its flood with the server stopped", func() bool {
		_, err := os.Stat(done)
		return err == nil
	})
	t.Logf("the child printed %d bytes and finished %v after the server stopped", size, time.Since(stopped).Round(time.Millisecond))
	if err := p.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the server to take the whole flood", func() bool {
		s, err := e.c.Get(context.Background(), id)
		return err == nil && s.End >= size
	})
}

func runCrashLoop(t *testing.T, fault crashFault) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	e := newEnv(t)
	// Everything printed stays in the log (the check reads it from 0). The
	// follower must see every byte, so the lag policy (a viewer more than a
	// queue behind is skipped ahead with a snapshot) is kept out of the way:
	// after a hang the backlog reaches it in one burst, and on a loaded
	// machine a -race follower is barely faster than the output. That policy
	// is TestStalledViewerIsResynced's and TestSoak's subject.
	// TK_CHAOS_VIEWER_QUEUE=1MiB (the default) puts it back.
	queue := cmp.Or(os.Getenv("TK_CHAOS_VIEWER_QUEUE"), "256MiB")
	e.serverArgs = []string{"--log-retention", "2GiB", "--viewer-queue", queue}
	e.startServer()
	const pad = 40 // 62-byte lines
	id := e.newLines("crash", "TK_BURST=64", "TK_EVERY=1ms", "TK_PAD="+strconv.Itoa(pad))
	before := e.session(id)
	if before.Pid == nil {
		t.Fatalf("the session has no pid: %+v", before)
	}
	dir := filepath.Join(e.dir, "sessions", id)
	meta, err := sessiondir.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := startFollower(e.c, id, 0)
	defer f.stop()
	waitFollower(t, f, "the first lines", 30*time.Second, func(next uint64, _ bool) bool { return next > 0 })

	start := time.Now()
	var ends []uint64
	for range fault.rounds {
		// A random moment: the server has been up 100 ms to 1.5 s.
		time.Sleep(time.Duration(100+rng.Intn(1400)) * time.Millisecond)
		if _, _, err := f.state(); err != nil {
			break
		}
		ends = append(ends, e.session(id).End)
		fault.hit(e, rng)
	}
	faulty := time.Since(start)

	// The follower catches up with the server's end, then the child stops
	// and says how many lines it printed.
	end := e.session(id).End
	waitFollower(t, f, "the follower to catch up", 2*time.Minute, func(next uint64, _ bool) bool { return next >= end })
	e.mustTk("send", "--no-enter", id, "s")
	waitFollower(t, f, "the END line", 2*time.Minute, func(_ uint64, ended bool) bool { return ended })
	fnext, _, _ := f.state()
	f.stop()

	log, logEnd := checkLog(t, e.c, id)
	if log.err != nil {
		t.Fatalf("the log: %v", log.err)
	}
	if !log.ended {
		t.Fatalf("the log has no END line (%d lines, end %d)", log.lines, logEnd)
	}
	f.mu.Lock()
	flines, attaches, waits := f.check.lines, f.attaches, slices.Clone(f.attachWait)
	f.mu.Unlock()
	if flines != log.lines || fnext != logEnd {
		t.Fatalf("the follower saw %d lines up to offset %d; the log holds %d lines up to %d", flines, fnext, log.lines, logEnd)
	}

	after := e.session(id)
	if after.State != "running" || after.Pid == nil || *after.Pid != *before.Pid {
		t.Fatalf("after the loop: state %s pid %v, want running with pid %d", after.State, after.Pid, *before.Pid)
	}
	if m, err := sessiondir.ReadMeta(dir); err != nil || m.HolderPid != meta.HolderPid || m.Pid != meta.Pid {
		t.Fatalf("meta.json after the loop: %+v %v; want holder %d child %d", m, err, meta.HolderPid, meta.Pid)
	}
	if err := syscall.Kill(meta.HolderPid, 0); err != nil {
		t.Fatalf("holder %d is gone: %v", meta.HolderPid, err)
	}
	e.mustTk("send", "--no-enter", id, "q")
	if _, errs, code := e.tk("wait", id, "--exit", "--timeout", "30s"); code != 0 {
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
		t.Name(), fault.name, len(ends), faulty.Round(time.Second), seed, queue, log.lines, float64(logEnd)/mib,
		attaches, median.Round(time.Millisecond), maxWait.Round(time.Millisecond), *before.Pid, meta.HolderPid, mibs(ends))
}

// mibs formats offsets in MiB, for a summary line.
func mibs(offs []uint64) string {
	var b strings.Builder
	for i, o := range offs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f", float64(o)/mib)
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
	skipShort(t)
	metaRounds := 3
	if soakMode() {
		metaRounds = 20
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	t0 := time.Now()
	e := newEnv(t)
	e.startServer()
	other := strings.TrimSpace(e.mustTk("new", "--name", "other", "--", "cat"))
	ticker := e.newLines("ticker", "TK_EVERY=50ms", "TK_PAD=20")
	tickerPid := *e.session(ticker).Pid
	tf := startFollower(e.c, ticker, 0)
	defer tf.stop()
	echo := func(word string) {
		t.Helper()
		e.mustTk("send", other, word)
		if _, errs, code := e.tk("wait", other, "--output", word, "--timeout", "30s"); code != 0 {
			t.Fatalf("the other session does not echo %s: %d %s", word, code, errs)
		}
	}
	holderOf := func(id string) sessiondir.Meta {
		t.Helper()
		m, err := sessiondir.ReadMeta(filepath.Join(e.dir, "sessions", id))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	interrupted := func(id string) {
		t.Helper()
		waitFor(t, 30*time.Second, id+" to be interrupted", func() bool { return e.session(id).State == "interrupted" })
	}

	// Segments: heavy output, SIGKILL past 9 MiB (4 MiB segments: three of them).
	const pad = 40
	seen := map[string]uint64{}
	var heavy []string
	for _, name := range []string{"seg", "torn"} {
		heavy = append(heavy, e.newLines(name, "TK_BURST=1024", "TK_PAD="+strconv.Itoa(pad)))
	}
	for _, id := range heavy {
		m := holderOf(id)
		waitFor(t, 60*time.Second, id+" to print 9 MiB", func() bool { return e.session(id).End > 9*mib })
		seen[id] = e.session(id).End
		syscall.Kill(m.HolderPid, syscall.SIGKILL)
	}
	for _, id := range heavy {
		interrupted(id)
	}
	t.Logf("%s: segment writers killed", time.Since(t0).Round(time.Millisecond))
	// A tear: the last record cut short and zeros after it.
	torn := heavy[1]
	segs, _ := filepath.Glob(filepath.Join(e.dir, "sessions", torn, sessiondir.LogDir, "*.seg"))
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
		id := strings.TrimSpace(e.mustTk("new", "--name", "meta"+strconv.Itoa(round), "--size", "80x24", "--", "cat"))
		metas = append(metas, id)
		dir := filepath.Join(e.dir, "sessions", id)
		m := holderOf(id)
		v := openViewer(t, e, id, wire.Hello{From: wire.FromEnd, Cols: 80, Rows: 24})
		stop := make(chan struct{})
		go func() {
			for i := 1; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s := sizes[i%len(sizes)]
				if v.s.Resize(s[0], s[1]) != nil {
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
	e.killServer()
	e.startServer()
	for _, id := range append(slices.Clone(heavy), metas...) {
		if s := e.session(id); s.State != "interrupted" {
			t.Fatalf("after a restart %s is %s, want interrupted", id, s.State)
		}
	}
	t.Logf("%s: server restarted", time.Since(t0).Round(time.Millisecond))
	lost := map[string]uint64{}
	for _, id := range heavy {
		chk, end := checkLog(t, e.c, id)
		if chk.err != nil {
			t.Fatalf("the log of %s after its holder was killed: %v", id, chk.err)
		}
		if chk.ended {
			t.Fatalf("the log of %s has an END line its child never printed", id)
		}
		// The unfinished last line is the start of the line that was due.
		if want := appendLine(nil, chk.next, pad); !bytes.HasPrefix(want, chk.partial) {
			t.Fatalf("the log of %s ends in %q, which does not begin line %d (%q)", id, chk.partial, chk.next, want)
		}
		if id != torn && end < seen[id] {
			t.Fatalf("the log of %s ends at %d, but the server had received up to %d", id, end, seen[id])
		}
		if id == torn {
			lost[id] = seen[id] - min(seen[id], end)
		}
		// capture --raw (the CLI's path) returns the same bytes.
		out := e.mustTk("capture", "--raw", id)
		if uint64(len(out)) != end {
			t.Fatalf("capture --raw %s: %d bytes, the log ends at %d", id, len(out), end)
		}
		t.Logf("%s: %d whole lines (%.1f MiB) before the kill, then %d bytes of the line due", e.session(id).Name, chk.lines, float64(end)/mib, len(chk.partial))
	}
	if s := e.session(ticker); s.State != "running" || s.Pid == nil || *s.Pid != tickerPid {
		t.Fatalf("the ticker session: %+v, want running with pid %d", s, tickerPid)
	}
	echo("after-restart")
	t.Logf("%s: logs checked", time.Since(t0).Round(time.Millisecond))
	end := e.session(ticker).End
	waitFollower(t, tf, "the ticker's follower to catch up", time.Minute, func(next uint64, _ bool) bool { return next >= end })
	e.mustTk("send", "--no-enter", ticker, "s")
	waitFollower(t, tf, "the ticker's END line", time.Minute, func(_ uint64, ended bool) bool { return ended })
	tlog, tend := checkLog(t, e.c, ticker)
	tnext, _, _ := tf.state()
	if tlog.err != nil || !tlog.ended || tlog.lines != tf.check.lines || tnext != tend {
		t.Fatalf("the ticker: log %d lines to %d (%v, ended %v), follower %d lines to %d", tlog.lines, tend, tlog.err, tlog.ended, tf.check.lines, tnext)
	}
	t.Logf("SUMMARY %s: 2 holders SIGKILLed mid-output (past %.1f MiB and %.1f MiB), one log then torn (cut %d bytes, %d zeros appended; the tear cost %d bytes the server had received); "+
		"%d holders SIGKILLed in a resize storm, %d of them while meta.json's temporary file existed (%d temporary files left behind), every meta.json whole; "+
		"the ticker printed %d lines through it all, each once at its follower; the other session echoed after each step",
		t.Name(), float64(seen[heavy[0]])/mib, float64(seen[torn])/mib, cut, zeros, lost[torn], metaRounds, caught, leftovers, tlog.lines)
}
