package core

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// A job the child left behind, which ignores SIGHUP, prints 60 lines
// after the child exited: `ls` shows the session "exited(0), output
// lingering" meanwhile, and the log keeps every line. (Before, the holder
// stopped reading 2 s after the child's exit and the rest was lost.)
func TestLeftoverOutputIsKept(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	dir := t.TempDir()
	id := strings.TrimSpace(e.MustTk("new", "--cwd", dir, "--", "sh", "-c",
		`(trap "" HUP; : > ready; sleep 1; for i in $(seq 60); do echo line $i; sleep 0.05; done) &
while [ ! -e ready ]; do sleep 0.01; done; exit 0`))
	e2e.WaitFor(t, 20*time.Second, "ls to show the output lingering", func() bool {
		return strings.Contains(e.MustTk("ls"), "exited(0), output lingering")
	})
	if s := e.Session(id); s.State != "running" || s.Lingering == nil || s.Lingering.ExitCode != 0 || s.Pid != nil {
		t.Fatalf("while lingering: %+v, want running with the child's exit and no pid", s)
	}
	e2e.WaitFor(t, 60*time.Second, "the session to end", func() bool { return e.Session(id).State == "exited" })
	out := e.MustTk("capture", "--raw", id)
	for i := 1; i <= 60; i++ {
		if !strings.Contains(out, fmt.Sprintf("line %d\r\n", i)) {
			t.Fatalf("line %d is not in the log (%d lines are):\n%s", i, strings.Count(out, "line "), out)
		}
	}
	if s := e.Session(id); s.ExitCode == nil || *s.ExitCode != 0 || s.Lingering != nil {
		t.Fatalf("ended: %+v, want exited 0", s)
	}
}

// `termkeep kill` ends every process of the session's terminal: a job
// that ignores SIGHUP and one that left with setsid (ignoring SIGHUP too)
// are gone with the child. (Before, both outlived the kill.)
func TestKillEndsLeftoverProcesses(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	dir := t.TempDir()
	id := strings.TrimSpace(e.MustTk("new", "--cwd", dir, "--", "sh", "-c",
		`(trap "" HUP; exec sleep 600) & echo $! > job.pid
setsid sh -c 'trap "" HUP; echo $$ > setsid.pid; exec sleep 600' &
while [ ! -s setsid.pid ]; do sleep 0.02; done; echo ready; exec sleep 600`))
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "ready", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: exit %d: %s", code, errs)
	}
	pids := []int{*e.Session(id).Pid}
	for _, f := range []string{"job.pid", "setsid.pid"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s: %q", f, b)
		}
		pids = append(pids, pid)
	}
	start := time.Now()
	e.MustTk("kill", id)
	for _, pid := range pids {
		e2e.WaitFor(t, 30*time.Second, fmt.Sprintf("process %d to end", pid), func() bool { return !running(pid) })
	}
	t.Logf("kill ended %d processes in %v", len(pids), time.Since(start).Round(time.Millisecond))
	if s := e.Session(id); s.State != "closed" {
		t.Fatalf("after kill: %s, want closed", s.State)
	}
}

// running reports whether process pid runs (a zombie does not).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
