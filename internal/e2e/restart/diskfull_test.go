package restart

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// mountSmallDisk mounts a tmpfs of size bytes on a new directory and
// returns it; it is unmounted when the test ends, after the env's cleanup.
// It skips the test when it cannot mount (not root, or no permission).
func mountSmallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full disk needs a small tmpfs, and mounting one needs root (internal/outlog's TestDiskFullStopsAndResumes covers the log with a fault-injecting file)")
	}
	dir, err := os.MkdirTemp("", "tkfull")
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		os.Remove(dir)
		t.Skipf("cannot mount a tmpfs (%v); internal/outlog's TestDiskFullStopsAndResumes covers the log with a fault-injecting file", err)
	}
	t.Cleanup(func() {
		unix.Unmount(dir, unix.MNT_DETACH)
		os.Remove(dir)
	})
	return dir
}

// fill writes a file that leaves about leave bytes free on dir's file system.
func fill(t *testing.T, dir string, leave int64) string {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * st.Bsize
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 1<<20)
	for left := free - leave; left > 0; left -= int64(len(block)) {
		if _, err := f.Write(block[:min(int64(len(block)), left)]); err != nil {
			break // the session's output got there first
		}
	}
	return path
}

// The state directory is on a small file system that fills up while a
// session prints numbered lines. The child is never blocked, `ls` and the
// viewers say the log stopped, a live viewer keeps receiving every line,
// and when space returns the log resumes by itself with the missing range
// recorded as a gap: offsets continue, and a reader of the log is told of
// the gap instead of getting the two sides glued together.
func TestDiskFull(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e2e.SkipShort(t)
	disk := mountSmallDisk(t, "24m")
	// The env lives on the small disk: registry, logs, server log and all.
	e := &e2e.Env{T: t, Dir: disk, C: client.New(statedir.Dir(disk))}
	t.Cleanup(e.Cleanup)
	e.ServerArgs = []string{"--log-retention", "1GiB", "--viewer-queue", "256MiB"}
	e.ServerEnv = []string{"TERMKEEP_QUIET_AFTER=2s"} // to tell when its window is trimmed (below)
	e.StartServer()

	const lineLen = 62 // linesChild with TK_PAD=40
	// About 250 KB/s: the unlogged bytes live only in the server's window
	// (a MiB), so a follower more than four seconds behind on a busy
	// machine would be told of a gap, rightly; this test is about one that
	// keeps up.
	id := e.NewLines("full", "TK_BURST=32", "TK_EVERY=8ms", "TK_PAD=40")
	before := e.Session(id)
	f := e2e.StartFollower(e.C, id, 0)
	defer f.Stop()
	e2e.WaitFollower(t, f, "the first lines", 30*time.Second, func(next uint64, _ bool) bool { return next > 0 })

	filler := fill(t, disk, 2<<20)
	var stopped api.Session
	e2e.WaitFor(t, time.Minute, "ls to say the log stopped", func() bool {
		stopped = e.Session(id)
		return stopped.LogStopped != nil
	})
	if stopped.LogStopped.Reason != "disk full" || stopped.State != "running" {
		t.Fatalf("while the disk is full: state %s, log %+v", stopped.State, stopped.LogStopped)
	}
	if out := e.MustTk("ls"); !strings.Contains(out, "log stopped: disk full") {
		t.Fatalf("ls does not say the log stopped:\n%s", out)
	}
	// A viewer that attaches now is told too.
	if st := logStateOf(t, e.C, id); !st.Stopped || st.Reason != "disk full" || st.At != stopped.LogStopped.At {
		t.Fatalf("a new viewer got log state %+v, want stopped at %d (disk full)", st, stopped.LogStopped.At)
	}
	if st := e.Session(id).LogStopped; st == nil || st.At != stopped.LogStopped.At {
		t.Fatalf("the log resumed on a full disk: %+v", st)
	}
	// The child runs on and the live viewer gets its lines meanwhile.
	n1, _, _ := f.State()
	e2e.WaitFollower(t, f, "output while the disk is full", 30*time.Second, func(next uint64, _ bool) bool { return next > n1+64<<10 })

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	var resumed api.Session
	e2e.WaitFor(t, 30*time.Second, "the log to resume", func() bool {
		resumed = e.Session(id)
		return resumed.LogStopped == nil
	})
	n2 := resumed.End
	e2e.WaitFollower(t, f, "output after the log resumed", 30*time.Second, func(next uint64, _ bool) bool { return next > n2+64<<10 })
	e.MustTk("send", "--no-enter", id, "s")
	e2e.WaitFollower(t, f, "the END line", 2*time.Minute, func(_ uint64, ended bool) bool { return ended })
	fnext, _, _ := f.State()
	f.Stop()
	f.Mu.Lock()
	flines := f.Check.Lines
	f.Mu.Unlock()

	// The log, read by a viewer from offset 0: whole lines where logged,
	// each at the offset its number says, and gap frames in between. The
	// server serves the newest output from its in-memory window, which
	// holds the bytes the log missed (the holder sent them from memory);
	// once the session has been quiet for a while the window keeps only
	// its last 64 KiB (docs/architecture.md), and the rest, the gap
	// included, is read from the log.
	e2e.WaitFor(t, 30*time.Second, "the server to trim the quiet session's window", func() bool {
		q := e.Session(id).QuietSince
		return q != nil && time.Since(*q) > 8*time.Second
	})
	gaps, logEnd, logLines := readLogWithGaps(t, e.C, id, lineLen)
	if logEnd != fnext {
		t.Fatalf("the log ends at %d, the follower at %d", logEnd, fnext)
	}
	if len(gaps) == 0 || gaps[0].Start != stopped.LogStopped.At {
		t.Fatalf("gaps %+v; the log stopped at %d", gaps, stopped.LogStopped.At)
	}
	var lost uint64
	for _, g := range gaps {
		lost += g.End - g.Start
	}
	if logLines == 0 || logLines >= flines || lost == 0 {
		t.Fatalf("the log has %d lines and %d bytes in gaps; the follower saw %d lines", logLines, lost, flines)
	}

	// The raw output skips the same gaps and names them.
	zero := uint64(0)
	out, err := e.C.Output(context.Background(), id, &zero)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, out)
	out.Close()
	raw := out.Gaps()
	if err != nil || uint64(n) != logEnd-lost || len(raw) != len(gaps) {
		t.Fatalf("raw output: %d bytes (%v), want %d; gaps %+v, want %+v", n, err, logEnd-lost, raw, gaps)
	}
	for i := range raw {
		if raw[i].Start != gaps[i].Start || raw[i].End != gaps[i].End || raw[i].Reason != "disk full" {
			t.Fatalf("raw output gap %d: %+v, want %+v", i, raw[i], gaps[i])
		}
	}
	_, stderr, code := e.Tk("capture", "--raw", id)
	if code != 0 || !strings.Contains(stderr, "never logged (disk full)") {
		t.Fatalf("capture --raw: exit %d, stderr %q", code, stderr)
	}

	after := e.Session(id)
	if after.State != "running" || after.Pid == nil || *after.Pid != *before.Pid {
		t.Fatalf("after the disk filled: state %s pid %v, want running with pid %d", after.State, after.Pid, *before.Pid)
	}
	t.Logf("SUMMARY %s: the log stopped at %d (disk full) and resumed by itself; %d gap(s), %d bytes not logged; the live viewer saw all %d lines, the log keeps %d, each at its offset; child pid %d unchanged",
		t.Name(), stopped.LogStopped.At, len(gaps), lost, flines, logLines, *before.Pid)
	e.MustTk("send", "--no-enter", id, "q")
}

// logStateOf attaches a viewer and returns the first log state it is sent.
func logStateOf(t *testing.T, c *client.Client, ref string) wire.LogState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.Attach(ctx, ref, wire.Hello{Role: wire.RoleViewer, Cols: 80, Rows: 24, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	go func() { <-ctx.Done(); s.Close() }()
	for {
		f, err := s.Next()
		if err != nil {
			t.Fatalf("no log state for a new viewer: %v", err)
		}
		if f.Type == wire.TypeLog {
			var st wire.LogState
			wire.ParseJSON(f.Payload, &st)
			return st
		}
	}
}

// readLogWithGaps reads a session's whole log as a waiter viewer from
// offset 0 up to its END line. Every whole line must sit at the offset its
// number says (lines are lineLen bytes); gap frames are collected.
func readLogWithGaps(t *testing.T, c *client.Client, ref string, lineLen uint64) (gaps []api.Gap, end, lines uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := c.Attach(ctx, ref, wire.Hello{Role: wire.RoleWaiter, From: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var pending []byte // bytes from off on, not yet a whole line
	off := uint64(0)
	for {
		f, err := s.Next()
		if err != nil {
			t.Fatalf("reading the log at %d: %v", off, err)
		}
		switch f.Type {
		case wire.TypeOutput:
			at, data, _ := wire.ParseOutput(f.Payload)
			if at != off+uint64(len(pending)) {
				t.Fatalf("output at %d, want %d", at, off+uint64(len(pending)))
			}
			pending = append(pending, data...)
			for {
				i := bytes.IndexByte(pending, '\n')
				if i < 0 {
					break
				}
				line := pending[:i+1]
				if off%lineLen == 0 && uint64(len(line)) == lineLen {
					seq, ok := e2e.ParseLine(line[:len(line)-2])
					if !ok || seq*lineLen != off {
						t.Fatalf("line at offset %d is %q (want line %d)", off, line, off/lineLen)
					}
					lines++
				} else if bytes.HasPrefix(line, []byte("END ")) {
					return gaps, off + uint64(len(line)), lines
				} else if off%lineLen == 0 {
					t.Fatalf("garbled line at offset %d: %q", off, line)
				}
				// else: the rest of a line cut by a gap
				off += uint64(len(line))
				pending = pending[i+1:]
			}
		case wire.TypeGap:
			from, to, _ := wire.ParseGap(f.Payload)
			if from != off+uint64(len(pending)) {
				t.Fatalf("gap from %d, want %d", from, off+uint64(len(pending)))
			}
			gaps = append(gaps, api.Gap{Start: from, End: to, Reason: "disk full"})
			pending, off = pending[:0], to
		case wire.TypeSnapshot:
			t.Fatalf("a waiter got a snapshot")
		case wire.TypeExit:
			t.Fatalf("the session ended before its END line")
		}
	}
}

// A job exits while the server is down and meta.json cannot take its end
// (a full disk; here the copy of meta.json from before the end is put
// back, as such a disk leaves it): the holder's status record has the
// exit, so the next server records the session exited 7 and
// --auto-restore does not run the finished job again. (Before, the
// session was interrupted and the job ran a second time.)
func TestFinishedJobIsNotRunAgain(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	cwd := t.TempDir()
	id := strings.TrimSpace(e.MustTk("new", "--auto-restore", "--cwd", cwd, "--", "sh", "-c",
		`echo start-$$; while [ ! -e go ]; do sleep 0.05; done; echo bye; exit 7`))
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "start-", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	dir := filepath.Join(e.Dir, "sessions", id)
	before, err := os.ReadFile(filepath.Join(dir, sessiondir.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	e.KillServer()
	os.WriteFile(filepath.Join(cwd, "go"), nil, 0o600)
	e2e.WaitFor(t, 20*time.Second, "the holder to record the end and go", func() bool {
		held, _ := sessiondir.LockHeld(dir)
		m, err := sessiondir.ReadMeta(dir)
		return !held && err == nil && m.EndedAt != nil
	})
	if err := os.WriteFile(filepath.Join(dir, sessiondir.MetaFile), before, 0o600); err != nil {
		t.Fatal(err)
	}
	e.StartServer()
	e2e.WaitFor(t, 20*time.Second, "the server to be ready (auto-restore done)", func() bool {
		code, _ := e.UnixGet("/readyz")
		return code == 200
	})
	s := e.Session(id)
	if s.State != "exited" || s.ExitCode == nil || *s.ExitCode != 7 {
		t.Fatalf("after the restart: %s (%+v), want exited 7", s.State, s)
	}
	if out := e.MustTk("capture", "--raw", id); strings.Count(out, "start-") != 1 || !strings.Contains(out, "bye") {
		t.Fatalf("the job ran %d times: %q", strings.Count(out, "start-"), out)
	}
}

// A child that ends while the disk is full is shown ended at once, from
// what its host knows and its holder's status record, though the registry
// refuses the write of its end (SQLITE_FULL); the server writes the end
// again, backing off, and the registry has it soon after space returns.
// Before, ls and stats showed the session running with its dead pid until
// the server restarted: it logged "record session end … database or disk
// is full" once and never tried again.
func TestEndRecordedAfterDiskFull(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	disk := mountSmallDisk(t, "20m")
	e := &e2e.Env{T: t, Dir: disk, C: client.New(statedir.Dir(disk))}
	t.Cleanup(e.Cleanup)
	// Retries every 400 ms at the most, not every 10 s.
	e.ServerEnv = []string{"TERMKEEP_REGISTRY_RETRY=400ms"}
	e.StartServer()
	stop := filepath.Join(t.TempDir(), "stop") // off the small disk
	id := strings.TrimSpace(e.MustTk("new", "--", "sh", "-c",
		`echo start; while [ ! -e `+stop+` ]; do sleep 0.05; done; echo bye; exit 7`))
	e.MustTk("wait", id, "--from", "start", "--output", "start", "--timeout", "20s")

	filler := fill(t, disk, 0)
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	serverLog := filepath.Join(disk, "server.log")
	e2e.WaitFor(t, 30*time.Second, "the registry to refuse the end", func() bool {
		b, _ := os.ReadFile(serverLog)
		return bytes.Contains(b, []byte(`msg="record session end" session=`+id)) && bytes.Contains(b, []byte("disk is full"))
	})
	s := e.Session(id)
	if s.State != "exited" || s.ExitCode == nil || *s.ExitCode != 7 || s.Pid != nil {
		t.Fatalf("while the disk is full: %s, exit %v, pid %v; want exited(7) without a pid", s.State, s.ExitCode, s.Pid)
	}
	if out := e.MustTk("stats"); !strings.Contains(out, "exited") {
		t.Fatalf("stats while the disk is full:\n%s", out)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	e2e.WaitFor(t, 10*time.Second, "the server to write the end again", func() bool {
		b, _ := os.ReadFile(serverLog)
		return bytes.Contains(b, []byte(`msg="recorded a session end the registry had refused" session=`+id))
	})
	t.Logf("the end was recorded %v after space was freed", time.Since(freed).Round(time.Millisecond))
	// The registry itself has it: read with the server gone.
	e.KillServer()
	st, err := store.Open(context.Background(), statedir.Dir(disk).DB(), nil)
	if err != nil {
		t.Fatal(err)
	}
	row, err := st.Session(context.Background(), id)
	st.Close()
	if err != nil || row.State != store.StateExited || row.ExitCode == nil || *row.ExitCode != 7 {
		t.Fatalf("the registry has %s, exit %v (%v); want exited(7)", row.State, row.ExitCode, err)
	}
}
