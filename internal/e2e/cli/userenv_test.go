package cli

import (
	"net"
	"os"
	"os/exec"
	"testing"

	"termkeep/internal/e2e"
)

// The tests do not depend on the user's environment: with TERMKEEP_LISTEN
// exported and naming a port the user's own server holds, and the XDG
// directories pointing elsewhere, the tests that autostart a server pass.
func TestUserEnvironmentIgnored(t *testing.T) {
	if os.Getenv("TK_E2E_USER_ENV") != "" {
		t.Skip("already the run with the user's environment")
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cmd := exec.Command(e2e.SelfBin, "-test.run=^(TestAutostartOnce|TestAttachWithNoServer)$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TK_E2E_USER_ENV=1", "TK_E2E_BIN_DIR="+e2e.BinDir,
		"TERMKEEP_LISTEN="+busy.Addr().String(), "TERMKEEP_STATE_DIR=/nonexistent",
		"XDG_STATE_HOME=/nonexistent", "XDG_CONFIG_HOME=/nonexistent")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("with the user's TERMKEEP_LISTEN on a busy port: %v\n%s", err, e2e.Tail(out, 4000))
	}
}
