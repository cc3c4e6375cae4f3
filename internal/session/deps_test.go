package session

import (
	"testing"

	"termkeep/internal/deptest"
)

// TestDeps keeps the session host below the processes and tools around it:
// it reads a session's directory through sessiondir and its log through
// outlog, and links in none of the holder, the exporters, the registry or
// the server (each of which may then depend on it). The packages under
// session/ count as session.
func TestDeps(t *testing.T) {
	deptest.Forbid(t, "termkeep/internal/session/...", map[string]string{
		"termkeep/internal/holder": "the holder is another process: meta.json and the file names are sessiondir's, the frames wire's",
		"termkeep/internal/export": "exports are made from the log; gaps are described by outlog",
		"termkeep/internal/store":  "the registry is the server's business",
		"termkeep/internal/server": "the server hosts sessions, not the other way round",
		"database/sql":             "the registry is the server's business",
	})
}
