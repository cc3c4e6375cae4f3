package core

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/client"
	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
	"termkeep/internal/testproc"
)

// A test binary SIGKILLed in the middle of a test (go test's -timeout, a
// Ctrl-C) leaves no server, holder or session child behind, though an
// autostarted server and each holder are in a session of their own.
func TestKilledTestLeavesNothing(t *testing.T) {
	if os.Getenv("TK_E2E_VICTIM") != "" {
		killedVictim(t)
		return
	}
	t.Parallel()
	cmd := exec.Command(e2e.SelfBin, "-test.run=^TestKilledTestLeavesNothing$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TK_E2E_VICTIM=1", "TK_E2E_BIN_DIR="+e2e.BinDir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var f []string
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VICTIM "); ok {
			f = strings.Fields(rest)
			break
		}
	}
	if len(f) != 4 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the killed test did not say what it started: %v", f)
	}
	run := f[0]
	var pids []int
	for _, s := range f[1:] {
		p, _ := strconv.Atoi(s)
		pids = append(pids, p)
	}
	t.Cleanup(func() {
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
	})
	cmd.Process.Kill()
	cmd.Wait()
	// The reaper removes the run directory once it has ended the rest.
	e2e.WaitFor(t, 30*time.Second, "the reaper to remove "+run, func() bool {
		_, err := os.Stat(run)
		return os.IsNotExist(err)
	})
	for i, p := range pids {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p)); err == nil && !strings.Contains(string(b), ") Z ") {
			t.Errorf("the %s (pid %d) outlived the killed test", []string{"server", "holder", "session's child"}[i], p)
		}
	}
}

// killedVictim is the test that is killed: it starts a server the way a
// CLI run does (autostart), and a session, says their pids, and waits.
func killedVictim(t *testing.T) {
	dir, err := os.MkdirTemp("", "tk")
	if err != nil {
		t.Fatal(err)
	}
	new := exec.Command(e2e.TkBin, "--state-dir", dir, "new", "--", "sleep", "300")
	b, err := new.Output()
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(b))
	meta, err := sessiondir.ReadMeta(statedir.Dir(dir).Session(id))
	if err != nil {
		t.Fatal(err)
	}
	h, err := client.New(statedir.Dir(dir)).Health(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("VICTIM %s %d %d %d\n", os.Getenv(testproc.RunEnv), h.Pid, meta.HolderPid, meta.Pid)
	time.Sleep(time.Hour) // until killed
}
