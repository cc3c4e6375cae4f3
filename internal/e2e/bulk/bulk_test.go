// Package bulk holds the end-to-end tests that push the most through one
// server, one at a time: 50 MiB of output captured byte for byte, the
// server killed in the middle of 50 MiB, a hundred sessions. A package of
// their own, so that they run beside the other end-to-end packages'
// tests, not before them.
package bulk

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
)

// A raw-mode child writes 50 MiB of known bytes; capture --raw returns
// exactly those bytes.
func TestByteExactLogging(t *testing.T) {
	e2e.SkipShort(t)
	e := e2e.NewEnv(t)
	e.StartServer()
	const n = 50 * e2e.MiB
	id := e.NewWriter("exact", 1, n, 0, false)
	out, errs, code := e.Tk("wait", id, "--exit", "--timeout", "120s")
	if code != 0 {
		t.Fatalf("wait --exit: %d %s %s", code, out, errs)
	}
	cmd := exec.Command(e2e.TkBin, "--state-dir", e.Dir, "--no-autostart", "capture", "--raw", id)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	if err := cmd.Run(); err != nil {
		t.Fatalf("capture --raw: %v", err)
	}
	e2e.CheckBytes(t, "capture --raw", buf.Bytes(), e2e.Pattern(1, n))

	// --from picks up from an exact offset.
	out = e.MustTk("capture", "--raw", "--from", strconv.Itoa(n-1000), id)
	e2e.CheckBytes(t, "capture --raw --from", []byte(out), e2e.Pattern(1, n)[n-1000:])
}

// The server is SIGKILLed in the middle of a session's output and started
// again: the child is the same process, the log has no gap and no duplicate,
// and a client that had offset N receives exactly the bytes from N.
func TestServerKilledMidOutput(t *testing.T) {
	e2e.SkipShort(t)
	e := e2e.NewEnv(t)
	e.StartServer()
	const n = 50 * e2e.MiB
	// 800 chunks of 64 KiB, 5 ms apart: output lasts about 4 s.
	id := e.NewWriter("survivor-1", 2, n, 5*time.Millisecond, true)
	before := e.Session(id)
	if before.Pid == nil {
		t.Fatalf("running session has no pid: %+v", before)
	}
	want := e2e.Pattern(2, n)

	// A client reads the first part, remembering its offset N.
	const N = 3 * e2e.MiB
	got := e2e.Collect(t, e.C, id, 0, N)
	e2e.CheckBytes(t, "first part", got, want[:N])

	e2e.WaitFor(t, 30*time.Second, "output to pass 6 MiB", func() bool { return e.Session(id).End > 6*e2e.MiB })
	e.KillServer()
	time.Sleep(300 * time.Millisecond) // output goes on with no server
	e.StartServer()

	after := e.Session(id)
	if after.State != "running" || after.Pid == nil || *after.Pid != *before.Pid {
		t.Fatalf("after restart: state %s pid %v, want running pid %d", after.State, after.Pid, *before.Pid)
	}
	if err := syscall.Kill(*before.Pid, 0); err != nil {
		t.Fatalf("child %d is gone: %v", *before.Pid, err)
	}
	// The client comes back with offset N and gets exactly the rest.
	rest := e2e.Collect(t, e.C, id, N, n)
	e2e.CheckBytes(t, "bytes from N after restart", rest, want[N:])

	e.MustTk("send", "--no-enter", id, "q")
	if _, errs, code := e.Tk("wait", id, "--exit", "--timeout", "30s"); code != 0 {
		t.Fatalf("wait --exit: %d %s", code, errs)
	}
	out := e.MustTk("capture", "--raw", id)
	e2e.CheckBytes(t, "whole log", []byte(out), want)
}

// 100 sessions created, listed and killed.
func TestHundredSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	e := e2e.NewEnv(t)
	e.StartServer()
	ids := map[string]bool{}
	for i := 0; i < 100; i++ {
		s, err := e.C.Create(context.Background(), createReq("s"+strconv.Itoa(i), "sleep", "600"))
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		ids[s.ID] = true
	}
	list := e.Ls()
	if len(list) != 100 {
		t.Fatalf("ls shows %d sessions, want 100", len(list))
	}
	pids := map[int]bool{}
	for _, s := range list {
		if !ids[s.ID] || s.State != "running" || s.Pid == nil {
			t.Fatalf("bad listing: %+v", s)
		}
		pids[*s.Pid] = true
	}
	if len(pids) != 100 {
		t.Fatalf("%d distinct pids, want 100", len(pids))
	}
	// A session costs the server no thread of its own (holders are reaped
	// through pidfds in the poller, not by a thread blocked in wait).
	srvPid := e.Srv.Cmd.Process.Pid
	if st, err := e2e.ReadProc(srvPid); err != nil {
		t.Fatal(err)
	} else if st.Threads >= 60 {
		t.Errorf("the server runs %d threads with 100 sessions", st.Threads)
	}
	errc := make(chan error, 100)
	for id := range ids {
		go func() {
			_, err := e.C.Kill(context.Background(), id)
			errc <- err
		}()
	}
	for range ids {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range e.Ls() {
		if s.State != "closed" {
			t.Fatalf("after kill: %s is %s", s.ID, s.State)
		}
	}
	for p := range pids {
		if syscall.Kill(p, 0) == nil {
			t.Fatalf("child %d survived kill", p)
		}
	}
	// Every holder that ended has been reaped: no zombies left behind.
	deadline := time.Now().Add(10 * time.Second)
	for z := zombieChildren(srvPid); len(z) > 0; z = zombieChildren(srvPid) {
		if time.Now().After(deadline) {
			t.Fatalf("the server left %d exited holders unreaped: %v", len(z), z)
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.MustTk("rm", "s0")
	if len(e.Ls()) != 99 {
		t.Fatal("rm did not remove the session")
	}
}

func createReq(name string, cmd ...string) api.CreateRequest {
	wd, _ := os.Getwd()
	return api.CreateRequest{Name: name, Command: cmd, Cwd: wd, Env: os.Environ()}
}

// zombieChildren lists the children of ppid that have exited and not been
// reaped (from /proc).
func zombieChildren(ppid int) []int {
	ents, _ := os.ReadDir("/proc")
	var z []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(ppid) {
			z = append(z, pid)
		}
	}
	return z
}
