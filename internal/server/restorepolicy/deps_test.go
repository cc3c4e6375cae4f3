package restorepolicy

import (
	"testing"

	"termkeep/internal/deptest"
)

// TestDeps keeps the policy a pure function: the caller reads the
// registry, meta.json and the boot id, and passes in what they say.
func TestDeps(t *testing.T) {
	deptest.Forbid(t, "termkeep/internal/server/restorepolicy", map[string]string{
		"os":                           "no I/O: the caller reads meta.json and the boot id",
		"time":                         "no clock: nothing here depends on when it is asked",
		"database/sql":                 "the registry is the server's business",
		"termkeep/internal/store":      "the caller passes the session's state as a string",
		"termkeep/internal/bootid":     "the caller passes the current boot",
		"termkeep/internal/session":    "the caller says whether the child exited",
		"termkeep/internal/sessiondir": "the caller reads meta.json",
	})
}
