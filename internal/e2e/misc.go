package e2e

import (
	"net"
	"os/exec"
	"testing"
	"time"
)

// MiB is a mebibyte, for sizes of output.
const MiB = 1 << 20

// DialUnix dials a Unix socket, giving up after 5 s.
func DialUnix(path string) (net.Conn, error) { return net.DialTimeout("unix", path, 5*time.Second) }

// Vim returns the path of vim (vim.tiny, vim or vi), or skips the test.
func Vim(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"vim.tiny", "vim", "vi"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("vim is not installed (`make test` installs vim-tiny)")
	return ""
}
