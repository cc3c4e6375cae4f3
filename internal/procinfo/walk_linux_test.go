package procinfo

import (
	"os"
	"os/exec"
	"testing"
)

func TestWalkFindsProcesses(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	seen := map[int]string{}
	err := Walk(func(pid int, stat []byte) {
		comm, state, ok := StatField(stat, 0)
		if !ok || len(state) != 1 {
			t.Errorf("pid %d: stat %q does not parse", pid, stat)
		}
		seen[pid] = string(comm)
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen[os.Getpid()] == "" || seen[cmd.Process.Pid] != "sleep" || seen[1] == "" {
		t.Fatalf("walk missed a process: self %q, child %q, init %q (%d seen)",
			seen[os.Getpid()], seen[cmd.Process.Pid], seen[1], len(seen))
	}
}

// A scan of every process must leave nothing for the collector: holders
// make one whenever they are asked about their foreground.
func TestWalkAllocatesNothing(t *testing.T) {
	var procs int
	allocs := testing.AllocsPerRun(20, func() {
		procs = 0
		Walk(func(pid int, stat []byte) {
			if _, g, ok := StatField(stat, 2); ok {
				if _, ok := Int(g); ok {
					procs++
				}
			}
		})
	})
	if procs < 2 || allocs != 0 {
		t.Fatalf("a walk of %d processes made %v allocations; want 0", procs, allocs)
	}
}
