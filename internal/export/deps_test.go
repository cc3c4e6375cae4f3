package export

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps export pure functions over a log and a writer: nothing
// of the network, the registry or the file system of its own.
func TestImports(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	out, err := exec.Command(goTool, "list", "-deps", "termkeep/internal/export").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := map[string]string{
		"net/http":                 "the server's handler streams what Export writes; export knows no HTTP",
		"database/sql":             "the registry is the store's business",
		"termkeep/internal/server": "the server uses export, not the other way",
		"termkeep/internal/store":  "an export reads a log, not the registry",
	}
	for _, p := range strings.Fields(string(out)) {
		if why, ok := forbidden[p]; ok {
			t.Errorf("export depends on %s: %s", p, why)
		}
	}
}
