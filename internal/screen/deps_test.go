package screen

import (
	"strings"
	"testing"

	"termkeep/internal/deptest"
)

// TestDeps keeps the screen model a pure state machine: no I/O, no
// goroutines, no clock, nothing of the network or the registry (its
// dependencies are linked into the holder and every tool).
func TestDeps(t *testing.T) {
	deptest.Forbid(t, "termkeep/internal/screen", map[string]string{
		"net":          "the screen model does no I/O",
		"net/http":     "the screen model does no I/O",
		"database/sql": "the registry is the store's business",
		"os/exec":      "the screen model starts no processes",
		"os/signal":    "the screen model handles no signals",
	})
	direct := map[string]string{
		"os":      "no files, no environment",
		"io":      "bytes come in through Write only",
		"io/fs":   "no files",
		"syscall": "no system calls",
		"time":    "no clock: the model depends on its input only",
		"runtime": "no goroutines",
		"unsafe":  "no unsafe memory",
	}
	// sync is allowed for its Pool alone: scratch buffers shared by every
	// screen (scrollback.go), which live in many goroutines.
	for _, p := range deptest.Imports(t, "termkeep/internal/screen") {
		if why, ok := direct[p]; ok {
			t.Errorf("screen imports %s: %s", p, why)
		}
		if strings.HasPrefix(p, "net") || strings.HasPrefix(p, "os") {
			t.Errorf("screen imports %s", p)
		}
	}
}
