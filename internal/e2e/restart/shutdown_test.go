package restart

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
)

// machineStop does to the server, its holders and their children what
// systemd does at a shutdown: SIGTERM to every process at once, and
// SIGKILL to whatever is left 2 s later. It returns once the server has
// exited and every holder is gone.
func machineStop(e *e2e.Env) {
	e.T.Helper()
	procs := []proc{procOf(e.Srv.Cmd.Process.Pid)}
	var holders []int
	metas, _ := filepath.Glob(filepath.Join(e.Dir, "sessions", "*", sessiondir.MetaFile))
	for _, p := range metas {
		m, err := sessiondir.ReadMeta(filepath.Dir(p))
		if err != nil || m.EndedAt != nil {
			continue
		}
		holders = append(holders, m.HolderPid)
		procs = append(procs, procOf(m.HolderPid))
		procs = append(procs, sessionProcs(m.Pid)...) // the child leads the pty's session
	}
	for _, p := range procs {
		p.signal(syscall.SIGTERM)
	}
	time.Sleep(2 * time.Second)
	for _, p := range procs {
		p.signal(syscall.SIGKILL)
	}
	e.Srv.Wait()
	e.Srv = nil
	for _, pid := range holders {
		e2e.WaitFor(e.T, 10*time.Second, "the holder to be gone", func() bool { return syscall.Kill(pid, 0) != nil })
	}
}

// ended waits until the server lists session id as ended.
func ended(e *e2e.Env, id string) {
	e.T.Helper()
	e2e.WaitFor(e.T, 20*time.Second, "the server to find session "+id+" ended", func() bool {
		return e.Session(id).State != "running"
	})
}

// proc is a process as /proc showed it: its pid and start time, so that a
// signal never reaches another process given the pid since.
type proc struct{ pid, start int }

func procOf(pid int) proc {
	_, start, _ := procStat(pid)
	return proc{pid, start}
}

// signal sends sig if the process still runs (a zombie does not).
func (p proc) signal(sig syscall.Signal) {
	if _, start, state := procStat(p.pid); start == p.start && state != "Z" {
		syscall.Kill(p.pid, sig)
	}
}

// procStat reads a process's session id, start time and state from
// /proc/<pid>/stat.
func procStat(pid int) (sid, start int, state string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, ""
	}
	i := strings.LastIndexByte(string(b), ')') // the command may hold spaces and parentheses
	if i < 0 {
		return 0, 0, ""
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3, the state
	if len(f) < 20 {
		return 0, 0, ""
	}
	sid, _ = strconv.Atoi(f[3])
	start, _ = strconv.Atoi(f[19])
	return sid, start, f[0]
}

// sessionProcs lists the processes of session sid: a session's child and
// whatever it started (a shell's jobs, a loop's sleep).
func sessionProcs(sid int) []proc {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []proc
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		if s, start, _ := procStat(pid); s == sid {
			out = append(out, proc{pid, start})
		}
	}
	return out
}

// A shutdown is not a close: after the systemd-style sequence an
// interactive shell and a looping job are both interrupted (not closed,
// not exited), their holders said so in meta.json, and restore --all
// brings both back running.
func TestMachineStopInterrupts(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	e := e2e.NewEnv(t)
	e.StartServer()
	shell := strings.TrimSpace(e.MustTk(append(append([]string{"new", "--name", "shell"}, e2e.ShellEnv(t)...), "--", "bash")...))
	loop := strings.TrimSpace(e.MustTk("new", "--name", "loop", "--no-shell-integration", "--", "sh", "-c", "while :; do date; sleep 0.2; done"))
	e.MustTk("send", shell, "echo ready-$((6*7))")
	if _, errs, code := e.Tk("wait", shell, "--from", "start", "--output", "ready-42", "--timeout", "20s"); code != 0 {
		t.Fatalf("the shell: %s", errs)
	}
	e2e.WaitFor(t, 20*time.Second, "the loop to print", func() bool { return e.Session(loop).End > 0 })

	machineStop(e)
	reasons := map[string]string{}
	for _, id := range []string{shell, loop} {
		m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", id))
		if err != nil {
			t.Fatal(err)
		}
		// A holder SIGKILLed before it wrote meta.json (a very busy
		// machine) leaves no end there; the server then finds it
		// interrupted all the same.
		if m.EndedAt != nil && (m.State() != "interrupted" || !strings.HasPrefix(m.Reason, "stopped by SIGTERM")) {
			t.Errorf("session %s: its holder recorded %s (status %v, reason %q), want interrupted, stopped by SIGTERM", id, m.State(), m.ExitCode, m.Reason)
		}
		if m.EndedAt != nil {
			reasons[id] = m.Reason
		}
	}
	e.StartServer()
	for _, id := range []string{shell, loop} {
		ended(e, id)
		s := e.Session(id)
		if s.State != "interrupted" {
			t.Errorf("session %s (%s) is %s after the stop (status %v, reason %q), want interrupted", id, s.Name, s.State, s.ExitCode, s.Reason)
		}
		if r, ok := reasons[id]; ok && s.Reason != r {
			t.Errorf("session %s: the server says %q, its holder %q", id, s.Reason, r)
		}
	}
	t.Logf("recorded by the holders: %q", reasons)
	if t.Failed() {
		t.FailNow()
	}

	out, errs, code := e.Tk("restore", "--all")
	if code != 0 {
		t.Fatalf("restore --all: exit %d: %s %s", code, out, errs)
	}
	for _, id := range []string{shell, loop} {
		if !strings.Contains(out, id) {
			t.Errorf("restore --all did not restore %s: %q", id, out)
		}
		if s := e.Session(id); s.State != "running" {
			t.Errorf("session %s is %s after restore --all, want running", id, s.State)
		}
	}
	e.SessionWorks(shell, "back-"+strconv.Itoa(os.Getpid()))
	end := e.Session(loop).End
	e2e.WaitFor(t, 20*time.Second, "the restored loop to print", func() bool { return e.Session(loop).End > end })
}

// Only an explicit close is "closed": sessions ended with termkeep kill
// stay closed through the same systemd-style stop, and restore --all
// leaves them alone; a running one beside them is interrupted.
func TestKillIsAClose(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	killed := strings.TrimSpace(e.MustTk("new", "--name", "killed", "--no-shell-integration", "--", "sh", "-c", "echo up; exec sleep 600"))
	loop := strings.TrimSpace(e.MustTk("new", "--name", "loop", "--no-shell-integration", "--", "sh", "-c", "while :; do date; sleep 0.2; done"))
	if _, errs, code := e.Tk("wait", killed, "--from", "start", "--output", "up", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	e.MustTk("kill", "killed")
	if s := e.Session(killed); s.State != "closed" {
		t.Fatalf("after termkeep kill: %s (%q), want closed", s.State, s.Reason)
	}
	if m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", killed)); err != nil || m.State() != "closed" {
		t.Fatalf("after termkeep kill, meta.json says %s (%v), want closed", m.State(), err)
	}

	machineStop(e)
	e.StartServer()
	ended(e, loop)
	if s := e.Session(killed); s.State != "closed" {
		t.Errorf("the killed session is %s after the stop, want closed", s.State)
	}
	if s := e.Session(loop); s.State != "interrupted" {
		t.Errorf("the running session is %s after the stop (%q), want interrupted", s.State, s.Reason)
	}
	out, errs, code := e.Tk("restore", "--all")
	if code != 0 || strings.TrimSpace(out) != loop {
		t.Fatalf("restore --all: exit %d, %q %q; want only %s restored", code, out, errs, loop)
	}
	if s := e.Session(killed); s.State != "closed" {
		t.Errorf("restore --all touched the killed session: %s", s.State)
	}
}
