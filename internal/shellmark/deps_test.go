package shellmark

import (
	"testing"

	"termkeep/internal/deptest"
)

// TestImports keeps shellmark a pure reader of bytes: the caller does the I/O.
func TestImports(t *testing.T) {
	deptest.Forbid(t, "termkeep/internal/shellmark", map[string]string{
		"net":          "the caller reads the log or the stream and hands the bytes in",
		"net/http":     "the server's handlers serve what it finds",
		"database/sql": "the registry is the store's business",
	})
}
