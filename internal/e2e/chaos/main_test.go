// Package chaos holds the end-to-end tests that kill the server (or the
// holders) again and again while output flows: through a real terminal
// attached in tmux, and in crash loops that check the log line by line. A
// package of their own, so that they run beside the other end-to-end
// packages.
package chaos

import (
	"testing"

	"termkeep/internal/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m) }
