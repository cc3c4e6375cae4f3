// Package viewers holds the end-to-end tests of many viewers on a session
// and of what a stalled viewer, server or holder does to them: fan-out
// byte for byte, resyncs, sizes, pings and hung holders. Apart from
// internal/e2e/core, the two run side by side.
package viewers

import (
	"testing"

	"termkeep/internal/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m) }
