package replay

import (
	"testing"

	"termkeep/internal/deptest"
)

// TestImports keeps replay a reader of logs and checkpoint files: nothing
// of the network or the registry.
func TestImports(t *testing.T) {
	deptest.Forbid(t, "termkeep/internal/replay", map[string]string{
		"net/http":                  "the server's handlers serve what replay renders; replay knows no HTTP",
		"database/sql":              "the registry is the store's business",
		"termkeep/internal/server":  "the server uses replay, not the other way",
		"termkeep/internal/store":   "replay reads a log, not the registry",
		"termkeep/internal/session": "the screen model uses replay's checkpoints, not the other way",
		"termkeep/internal/export":  "the session host renders with replay; gaps are described by outlog",
	})
}
