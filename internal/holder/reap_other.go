//go:build !linux

package holder

import "os/exec"

// reap waits for cmd's process to exit and reaps it (a thread blocked in
// wait while it runs; reap_linux.go does without).
func reap(cmd *exec.Cmd) error { return cmd.Wait() }
