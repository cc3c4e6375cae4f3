// Package crashloop holds the end-to-end tests that kill or hang the server,
// or kill holders, again and again while a session prints, and check its
// log line by line: no line lost or repeated. A package of its own, so that
// they run beside the other end-to-end packages (package chaos does the
// same through a real terminal attached in tmux).
package crashloop

import (
	"testing"

	"termkeep/internal/e2e"
)

func TestMain(m *testing.M) { e2e.MainPlain(m) }
