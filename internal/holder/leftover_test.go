package holder

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// A process the child left behind, which ignores SIGHUP, prints 60 lines
// over 3 s after the child exited: with a linger, the holder logs every
// one, records the child's exit as soon as it knows it, and ends once no
// process holds the terminal, well before the linger is over. (Before,
// the holder stopped reading 2 s after the child's exit: 16 lines of 60
// were logged.)
func TestLingerKeepsLeftoverOutput(t *testing.T) {
	// The parent waits until the job ignores SIGHUP: its exit sends SIGHUP
	// to the terminal's foreground group, which the job is in.
	th := startHolderWith(t, `(trap '' HUP; : > ready; sleep 0.2; for i in $(seq 60); do echo line $i; sleep 0.05; done) &
while [ ! -e ready ]; do sleep 0.01; done; exit 0`, Spec{Linger: time.Minute}, nil)
	sawChild := false
	deadline := time.Now().Add(wait)
	for !sawChild && time.Now().Before(deadline) {
		select {
		case <-th.done:
			deadline = time.Now()
		case <-time.After(20 * time.Millisecond):
			th.h.mu.Lock()
			sawChild = th.h.meta.Child != nil && !th.h.exited
			th.h.mu.Unlock()
		}
	}
	m, err := th.endedMeta()
	if err != nil {
		t.Fatal(err)
	}
	got := loggedOnDisk(t, th.dir)
	var want bytes.Buffer
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the log holds %d of 60 lines:\n%s", bytes.Count(got, []byte("line ")), got)
	}
	if !sawChild {
		t.Error("the child's exit was not recorded while the holder lingered")
	}
	if m.State() != "exited" || *m.ExitCode != 0 || m.Child == nil || m.Child.ExitCode != 0 || m.End != uint64(len(got)) {
		t.Fatalf("meta.json %+v (child %+v), want exited 0 at %d with the child's exit", m, m.Child, len(got))
	}
	if d := m.EndedAt.Sub(m.Child.At); d > 30*time.Second {
		t.Fatalf("the session ended %v after the child: the holder waited out its linger", d)
	}
}

// A close ends every process of the session's terminal: the child, a job
// of its process group that ignores SIGHUP, and one that left the
// terminal's session with setsid (and ignores SIGHUP too), but still holds
// the terminal as its output. (Before, both jobs outlived the close.)
func TestCloseEndsTheTerminalsProcesses(t *testing.T) {
	th := startHolderWith(t, `(trap '' HUP; exec sleep 600) & echo $! > job.pid
setsid sh -c 'trap "" HUP; echo $$ > setsid.pid; exec sleep 600' &
while [ ! -s setsid.pid ]; do sleep 0.02; done; printf ready; read x`, Spec{Linger: time.Minute}, nil)
	th.waitEnd(5)
	pids := []int{th.h.cmd.Process.Pid}
	for _, f := range []string{"job.pid", "setsid.pid"} {
		b, _ := os.ReadFile(filepath.Join(th.dir, f))
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s: %q", f, b)
		}
		pids = append(pids, pid)
	}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("process %d is not running before the close", pid)
		}
	}
	start := time.Now()
	th.h.close(200 * time.Millisecond)
	m, err := th.endedMeta()
	if err != nil || m.State() != "closed" {
		t.Fatalf("meta.json %+v, %v; want closed", m, err)
	}
	deadline := time.Now().Add(wait)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d outlived the close by %v", pid, wait)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Logf("the close ended %d processes in %v", len(pids), time.Since(start).Round(time.Millisecond))
}

// loggedOnDisk reads the whole log of an ended holder's session.
func loggedOnDisk(t *testing.T, dir string) []byte {
	t.Helper()
	l, err := outlog.Open(filepath.Join(dir, sessiondir.LogDir), outlog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := l.Cursor(l.First())
	defer c.Close()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read the log: %v", err)
	}
	return b
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: the signal's answer is all there is
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// A server of protocol version 4 is told once, with a linger frame, that
// the child exited and the holder reads on; the Exit frame follows the
// leftover job's output. A server of version 3 does not know the frame
// and gets only the output and the Exit.
func TestLingerFrame(t *testing.T) {
	for _, v := range []int{3, wire.Version} {
		t.Run(fmt.Sprint("version ", v), func(t *testing.T) {
			th := startHolderWith(t, `(trap '' HUP; : > ready; sleep 1; echo late) &
while [ ! -e ready ]; do sleep 0.01; done; exit 5`, Spec{Linger: time.Minute}, nil)
			s := th.dial()
			s.w.JSON(wire.TypeHello, wire.Hello{Version: v, Role: "server", From: 0})
			if f := s.next(); f.Type != wire.TypeWelcome {
				t.Fatalf("got %s, want a welcome", f.Type)
			}
			st := &stream{}
			s.readTo(st, 1<<62)
			want := "[exit exited]"
			if v >= 4 {
				want = "[linger exit exited]"
			}
			if got := fmt.Sprint(st.trace); got != want || string(st.data) != "late\n" || *st.exit.ExitCode != 5 {
				t.Fatalf("frames %s after %q (exit %+v), want %s after %q", got, st.data, st.exit, want, "late\n")
			}
		})
	}
}

// A holder that has ended signals nothing by its pty's device: the next
// session's pty gets the same number once the old one is closed, and a
// hang-up's SIGKILL that fires late (a close's grace racing the end) must
// not reach that session's processes.
func TestEndedHolderSparesTheNextPty(t *testing.T) {
	old := startHolder(t, echoLines, 0)
	old.waitEnd(5)
	old.h.close(0)
	select {
	case <-old.done:
	case <-time.After(wait):
		t.Fatal("the closed holder did not end")
	}
	var next *testHolder
	for range 5 {
		th := startHolder(t, echoLines, 0)
		th.waitEnd(5)
		if th.h.ptsDev == old.h.ptsDev {
			next = th
			break
		}
	}
	if next == nil {
		t.Skip("no new pty took the closed one's number (another process holds it)")
	}
	old.h.signalSession(syscall.SIGKILL)
	next.untouched("alive")
}
