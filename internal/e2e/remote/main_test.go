// Package remote holds the end-to-end tests of termkeep over ssh (attach
// HOST:SESSION, ls HOST:, new HOST:): a real sshd on 127.0.0.1 with keys
// of the test's own, the local termkeep running the user's ssh, the
// remote one the same binaries with a state directory of the test's.
package remote

import (
	"testing"

	"termkeep/internal/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m) }
