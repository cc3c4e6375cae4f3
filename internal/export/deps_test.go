package export

import (
	"testing"

	"termkeep/internal/deptest"
)

// TestImports keeps export pure functions over a log and a writer: nothing
// of the network, the registry or the file system of its own.
func TestImports(t *testing.T) {
	deptest.Forbid(t, "termkeep/internal/export", map[string]string{
		"net/http":                 "the server's handler streams what Export writes; export knows no HTTP",
		"database/sql":             "the registry is the store's business",
		"termkeep/internal/server": "the server uses export, not the other way",
		"termkeep/internal/store":  "an export reads a log, not the registry",
	})
}
