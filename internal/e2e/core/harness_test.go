package core

import (
	"os/exec"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// A binary built with -race sleeps a second at exit by default (GORACE's
// atexit_sleep_ms), and the e2e tests run the CLI, servers and holders
// thousands of times: the harness turns that sleep off for every process
// it starts, or the suite spends minutes asleep. The fastest of five runs
// is timed, so that a moment of load on a busy machine does not count; a
// run with the sleep takes a second at least, however fast the machine.
func TestCLIExitsPromptly(t *testing.T) {
	fastest := time.Hour
	for range 5 {
		began := time.Now()
		if out, err := exec.Command(e2e.TkBin, "--version").CombinedOutput(); err != nil {
			t.Fatalf("termkeep --version: %v: %s", err, out)
		}
		fastest = min(fastest, time.Since(began))
	}
	if fastest >= 950*time.Millisecond {
		t.Errorf("termkeep --version took %s at best; want well under the race detector's 1 s exit sleep", fastest.Round(time.Millisecond))
	}
}
