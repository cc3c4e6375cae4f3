// Package chaos holds the end-to-end tests that kill the server again and
// again while output flows through a real terminal attached in tmux: every
// line once, in order. A package of its own, so that they run beside the
// other end-to-end packages (package crashloop checks the log itself).
package chaos

import (
	"testing"

	"termkeep/internal/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m) }
