package remote

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"termkeep/internal/e2e"
	"termkeep/internal/testproc"
	"termkeep/internal/testsshd"
)

// sshd is a private sshd on 127.0.0.1 that lets in this user with a key
// of the test's (SSH), and one with lockedPassphrase (LockedSSH).
type sshd = testsshd.Server

// startSSHD starts sshd, ended when the test ends. Without sshd the test
// is skipped.
func startSSHD(t *testing.T) *sshd {
	t.Helper()
	if why := testsshd.Missing(); why != "" {
		t.Skipf("%s: `make test-deps` installs openssh-server (as root)", why)
	}
	srv, err := testsshd.Start(testsshd.Options{Locked: lockedPassphrase})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sshd.log:\n%s", e2e.Tail(srv.Log(), 3000))
		}
		srv.Close()
	})
	return srv
}

// lockedPassphrase is the passphrase of sshd's second key, which no
// agent holds: ssh asks for it on its terminal, and fails in batch mode.
const lockedPassphrase = "open sesame"

// freePort is a TCP port on 127.0.0.1 that nothing listened on a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	port, err := testsshd.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// remoteBin writes the remote termkeep for env e: the test's termkeep
// with e's state directory and the test run's environment, which sshd
// does not pass on (testproc reaps by it).
func remoteBin(t *testing.T, e *e2e.Env) string {
	t.Helper()
	var exports []string
	for _, k := range []string{testproc.RunEnv, "TMPDIR", "GORACE", "TERMKEEP_QUIET_AFTER"} {
		exports = append(exports, k+"="+shq(os.Getenv(k)))
	}
	p := filepath.Join(e.Dir, "remote-termkeep")
	// A server it starts serves no browsers: the default port is anyone's.
	script := fmt.Sprintf("#!/bin/sh\nexport TERMKEEP_STATE_DIR=%s TERMKEEP_LISTEN=off %s\nexec %s \"$@\"\n", shq(e.Dir), strings.Join(exports, " "), shq(e2e.TkBin))
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
