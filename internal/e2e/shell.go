package e2e

import (
	"path/filepath"
	"testing"
)

// ShellEnv is the environment flags of a test shell: its own empty home, so
// no rc file of the machine's changes what it prints.
func ShellEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{"--env", "HOME=" + home, "--env", "PS1=$ ", "--env", "HISTFILE=" + filepath.Join(home, ".bash_history")}
}
