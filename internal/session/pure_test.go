package session

import (
	"strings"
	"testing"

	"termkeep/internal/deptest"
)

// TestPureParts keeps the host's deciding parts free of what the host
// itself does: they take the time as an argument and leave sockets, files,
// goroutines and locks to the host, so that a table test sees all they do.
func TestPureParts(t *testing.T) {
	// Direct imports only: fmt alone links os in.
	forbidden := map[string]string{
		"os":        "files are the host's",
		"io":        "reading and writing are the host's",
		"net":       "sockets are the host's",
		"net/http":  "sockets are the host's",
		"os/exec":   "processes are the holder's",
		"sync":      "locks and goroutines are the host's",
		"syscall":   "system calls are the host's",
		"log/slog":  "logging what was decided is the host's",
		"math/rand": "a decision is the same for the same input",
	}
	for _, pkg := range []string{
		"termkeep/internal/session/catchup",
		"termkeep/internal/session/flow",
		"termkeep/internal/session/window",
		"termkeep/internal/session/sizepolicy",
		"termkeep/internal/termq",
	} {
		for _, p := range deptest.Imports(t, pkg) {
			if why, ok := forbidden[p]; ok {
				t.Errorf("%s imports %s: %s", pkg, p, why)
			}
			if strings.HasPrefix(p, "termkeep/") && p != "termkeep/internal/wire" {
				t.Errorf("%s imports %s: it depends on nothing of termkeep but the wire protocol's names", pkg, p)
			}
		}
	}
}
