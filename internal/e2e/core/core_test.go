package core

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// A client detaches while output continues and reattaches with its offset:
// it receives exactly the missing bytes.
func TestDetachReattachExact(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	const n = 8 * e2e.MiB
	id := e.NewWriter("resume", 3, n, 2*time.Millisecond, true, "--size", "100x30")
	want := e2e.Pattern(3, n)
	const N = 1 * e2e.MiB
	e2e.CheckBytes(t, "before detach", e2e.Collect(t, e.C, id, 0, N), want[:N])
	e2e.WaitFor(t, 30*time.Second, "output to go on", func() bool { return e.Session(id).End > 3*e2e.MiB })
	e2e.CheckBytes(t, "after reattach", e2e.Collect(t, e.C, id, N, n), want[N:])
	s := e.Session(id)
	if s.Cols != 100 || s.Rows != 30 {
		t.Fatalf("size %dx%d, want 100x30", s.Cols, s.Rows)
	}
}

// A child exits while no server runs: the next server shows it exited with
// the right status.
func TestExitWhileServerDown(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--", "sh", "-c", "read x; echo bye; exit 7"))
	e.KillServer()
	dir := filepath.Join(e.Dir, "sessions", id)
	meta, err := sessiondir.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The child waits for a line. With no server running, type it through
	// the holder's socket, as a server would.
	sendToHolder(t, dir, "go\r")
	e2e.WaitFor(t, 20*time.Second, "the child to exit", func() bool {
		m, err := sessiondir.ReadMeta(dir)
		return err == nil && m.EndedAt != nil
	})
	if err := syscall.Kill(meta.Pid, 0); err == nil {
		t.Fatalf("child %d still runs", meta.Pid)
	}
	e.StartServer()
	s := e.Session(id)
	if s.State != "exited" || s.ExitCode == nil || *s.ExitCode != 7 || s.Pid != nil {
		t.Fatalf("after restart: %+v, want exited with status 7 and no pid", s)
	}
	if out := e.MustTk("capture", "--raw", id); !strings.Contains(out, "bye") {
		t.Fatalf("capture lost the last output: %q", out)
	}
	if _, _, code := e.Tk("wait", id, "--exit"); code != 7 {
		t.Fatalf("wait --exit on an exited session: exit %d, want 7", code)
	}
}

// sendToHolder types text into a session by speaking to its holder directly,
// as a server would.
func sendToHolder(t *testing.T, dir, text string) {
	t.Helper()
	c, err := e2e.DialUnix(filepath.Join(dir, sessiondir.SocketFile))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := wire.NewWriter(c)
	w.JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: wire.RoleServer, From: wire.FromEnd})
	var buf []byte
	f, err := wire.ReadFrame(c, &buf)
	if err != nil || f.Type != wire.TypeWelcome {
		t.Fatalf("holder welcome: %v %v", f.Type, err)
	}
	if err := w.Input([]byte(text)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
}

// A holder SIGKILLed: the session becomes interrupted with a clear reason;
// the server and other sessions are unaffected.
func TestHolderKilled(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	victim := strings.TrimSpace(e.MustTk("new", "--name", "victim", "--", "sleep", "600"))
	other := strings.TrimSpace(e.MustTk("new", "--name", "other", "--", "cat"))
	meta, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", victim))
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(meta.HolderPid, syscall.SIGKILL)
	e2e.WaitFor(t, 20*time.Second, "the session to be interrupted", func() bool {
		return e.Session(victim).State == "interrupted"
	})
	s := e.Session(victim)
	if s.ExitCode != nil || !strings.Contains(s.Reason, "holder") {
		t.Fatalf("interrupted session: %+v, want no status and a reason naming the holder", s)
	}
	// The other session still works end to end.
	e.MustTk("send", "other", "still here")
	if _, errs, code := e.Tk("wait", other, "--from", "start", "--output", "still here", "--timeout", "20s"); code != 0 {
		t.Fatalf("other session: wait exit %d: %s", code, errs)
	}
	if e.Session(other).State != "running" {
		t.Fatal("other session is not running")
	}
	// Its end is told the same way to a fresh viewer, and kill of an ended
	// session succeeds.
	if _, errs, code := e.Tk("wait", "victim", "--exit"); code != 1 || !strings.Contains(errs, "interrupted") {
		t.Fatalf("wait on interrupted: exit %d %q", code, errs)
	}
	e.MustTk("kill", "victim")
}

// A registry lost while sessions run: the next server adopts every session
// directory whose holder still runs.
func TestRegistryLostAdoptsSessions(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--", "cat"))
	pid := *e.Session(id).Pid
	e.KillServer()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(e.Dir, "termkeep.db"+suffix))
	}
	e.StartServer()
	s := e.Session(id)
	if s.State != "running" || s.Pid == nil || *s.Pid != pid {
		t.Fatalf("adopted session: %+v, want running with pid %d", s, pid)
	}
	e.MustTk("send", id, "adopted-ok")
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "adopted-ok", "--timeout", "20s"); code != 0 {
		t.Fatalf("adopted session does not work: %d %s", code, errs)
	}
}

// A damaged segment in the middle of a log: a viewer is told which bytes
// are lost (a gap) and receives every other byte exactly.
func TestCorruptSegmentIsSkipped(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	const n = 10 * e2e.MiB // three 4 MiB segments
	id := e.NewWriter("corrupt", 4, n, 0, false)
	if _, errs, code := e.Tk("wait", id, "--exit", "--timeout", "60s"); code != 0 {
		t.Fatalf("wait: %d %s", code, errs)
	}
	segs, _ := filepath.Glob(filepath.Join(e.Dir, "sessions", id, sessiondir.LogDir, "*.seg"))
	if len(segs) < 3 {
		t.Fatalf("%d segments, want at least 3", len(segs))
	}
	mid := segs[1]
	lo, _ := strconv.ParseUint(strings.TrimSuffix(filepath.Base(mid), ".seg"), 10, 64)
	hi, _ := strconv.ParseUint(strings.TrimSuffix(filepath.Base(segs[2]), ".seg"), 10, 64)
	f, err := os.OpenFile(mid, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	var b [1]byte
	f.ReadAt(b[:], st.Size()/2)
	b[0] ^= 0xff
	f.WriteAt(b[:], st.Size()/2)
	f.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := e.C.Attach(ctx, id, wire.Hello{Role: wire.RoleWaiter, From: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := e2e.Pattern(4, n)
	var next uint64
	gaps := 0
	for {
		fr, err := s.Next()
		if err != nil {
			t.Fatalf("stream ended at %d: %v", next, err)
		}
		if fr.Type == wire.TypeExit {
			break
		}
		switch fr.Type {
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(fr.Payload)
			if off != next {
				t.Fatalf("output at %d, want %d", off, next)
			}
			if !bytes.Equal(data, want[off:off+uint64(len(data))]) {
				t.Fatalf("wrong bytes at %d", off)
			}
			next += uint64(len(data))
		case wire.TypeGap:
			from, to, _ := wire.ParseGap(fr.Payload)
			if from != next || from < lo || to > hi {
				t.Fatalf("gap [%d, %d) outside the damaged segment [%d, %d)", from, to, lo, hi)
			}
			gaps++
			next = to
		}
	}
	if gaps != 1 || next != n {
		t.Fatalf("%d gaps, stream ended at %d; want 1 gap and end %d", gaps, next, n)
	}
}

// A session that printed past a small retention lists the oldest offset
// its log keeps as first_offset, in `ls` and in a lookup: where `capture
// --raw` starts (the output stream's Termkeep-First-Offset), its bytes the
// tail of what the child wrote.
func TestFirstOffsetListed(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.ServerEnv = []string{"TERMKEEP_LOG_RETENTION=256KiB"}
	e.StartServer()
	const n = 4 * e2e.MiB
	id := e.NewWriter("spill", 3, n, 0, false)
	if out, errs, code := e.Tk("wait", id, "--exit", "--timeout", "120s"); code != 0 {
		t.Fatalf("wait --exit: %d %s %s", code, out, errs)
	}
	var listed api.Session
	for _, s := range e.Ls() {
		if s.ID == id {
			listed = s
		}
	}
	if listed.First == 0 || listed.First >= listed.End || listed.End != n {
		t.Fatalf("ls lists first_offset %d, end_offset %d; want 0 < first < end = %d", listed.First, listed.End, n)
	}
	if got := e.Session(id); got.First != listed.First {
		t.Errorf("GET says first_offset %d, ls %d", got.First, listed.First)
	}
	out, err := e.C.Output(context.Background(), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	out.Close()
	if out.First != listed.First {
		t.Errorf("the output stream starts at %d, first_offset is %d", out.First, listed.First)
	}
	cmd := exec.Command(e2e.TkBin, "--state-dir", e.Dir, "--no-autostart", "capture", "--raw", id)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	if err := cmd.Run(); err != nil {
		t.Fatalf("capture --raw: %v", err)
	}
	e2e.CheckBytes(t, "capture --raw", buf.Bytes(), e2e.Pattern(3, n)[listed.First:])
}
