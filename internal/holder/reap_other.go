//go:build !linux

package holder

import "os/exec"

// reap waits for the holder to exit and reaps it (a thread blocked in
// wait while it runs; reap_linux.go does without).
func reap(cmd *exec.Cmd) error { return cmd.Wait() }

// awaitExit returns at once: cmd.Wait does the waiting (reap_linux.go
// waits in the poller instead).
func awaitExit(*exec.Cmd) {}
