package replay

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps replay a reader of logs and checkpoint files: nothing
// of the network or the registry.
func TestImports(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	out, err := exec.Command(goTool, "list", "-deps", "termkeep/internal/replay").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := map[string]string{
		"net/http":                  "the server's handlers serve what replay renders; replay knows no HTTP",
		"database/sql":              "the registry is the store's business",
		"termkeep/internal/server":  "the server uses replay, not the other way",
		"termkeep/internal/store":   "replay reads a log, not the registry",
		"termkeep/internal/session": "the screen model uses replay's checkpoints, not the other way",
	}
	for _, p := range strings.Fields(string(out)) {
		if why, ok := forbidden[p]; ok {
			t.Errorf("replay depends on %s: %s", p, why)
		}
	}
}
