package remote

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/testproc"
)

// sshdPath is where Debian's openssh-server puts sshd.
const sshdPath = "/usr/sbin/sshd"

// sshd is a private sshd on 127.0.0.1 that lets in this user with a key
// of the test's.
type sshd struct {
	dir  string
	port int
	// ssh is TERMKEEP_SSH for it: its port, the key, its host key known;
	// lockedSSH the same with the key that has a passphrase.
	ssh, lockedSSH string
}

// startSSHD starts sshd in the foreground with a configuration of its own
// (its host key, the test's key as the only authorized one, a free port),
// ended when the test ends. Without sshd the test is skipped.
func startSSHD(t *testing.T) *sshd {
	t.Helper()
	if _, err := os.Stat(sshdPath); err != nil {
		t.Skipf("no sshd at %s: `make test-deps` installs openssh-server (as root)", sshdPath)
	}
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("no ssh-keygen: `make test-deps` installs openssh-server (as root)")
	}
	if os.Getuid() == 0 {
		// sshd run by root separates privileges into this empty
		// directory, which the service's unit makes.
		os.MkdirAll("/run/sshd", 0o755)
	}
	dir, err := os.MkdirTemp("", "sd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for k, passphrase := range map[string]string{"host": "", "user": "", "locked": lockedPassphrase} {
		if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", passphrase, "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
	}
	pub, _ := os.ReadFile(filepath.Join(dir, "user.pub"))
	locked, _ := os.ReadFile(filepath.Join(dir, "locked.pub"))
	hostPub, _ := os.ReadFile(filepath.Join(dir, "host.pub"))
	os.WriteFile(filepath.Join(dir, "authorized_keys"), append(pub, locked...), 0o600)
	s := &sshd{dir: dir, port: freePort(t)}
	// Known by an alias: the same through a proxy's port.
	os.WriteFile(filepath.Join(dir, "known_hosts"), fmt.Appendf(nil, "termkeep-test %s", hostPub), 0o600)
	// The remote shell's HOME is an empty directory: its rc files (a
	// login's 2 s here) are the machine's, not the test's, and a
	// termkeep in ~/.local/bin would be the user's.
	home := filepath.Join(dir, "home")
	os.Mkdir(home, 0o700)
	conf := filepath.Join(dir, "sshd_config")
	os.WriteFile(conf, fmt.Appendf(nil, `Port %d
SetEnv HOME=%s
ListenAddress 127.0.0.1
HostKey %s
PidFile none
AuthorizedKeysFile %s
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
LogLevel ERROR
`, s.port, home, filepath.Join(dir, "host"), filepath.Join(dir, "authorized_keys")), 0o600)
	logf, err := os.Create(filepath.Join(dir, "sshd.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(sshdPath, "-D", "-e", "-f", conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// The connections' own sshd processes are in its group.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "sshd.log"))
			t.Logf("sshd.log:\n%s", e2e.Tail(b, 3000))
		}
	})
	e2e.WaitFor(t, 10*time.Second, "sshd to listen", func() bool {
		select {
		case <-exited:
			b, _ := os.ReadFile(filepath.Join(dir, "sshd.log"))
			t.Fatalf("sshd exited: %s", b)
		default:
		}
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	opts := fmt.Sprintf("-F /dev/null -p %d -o IdentitiesOnly=yes -o HostKeyAlias=termkeep-test -o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes -o LogLevel=ERROR",
		s.port, filepath.Join(dir, "known_hosts"))
	s.ssh = fmt.Sprintf("ssh %s -i %s", opts, filepath.Join(dir, "user"))
	s.lockedSSH = fmt.Sprintf("ssh %s -i %s", opts, filepath.Join(dir, "locked"))
	return s
}

// lockedPassphrase is the passphrase of sshd's second key, which no
// agent holds: ssh asks for it on its terminal, and fails in batch mode.
const lockedPassphrase = "open sesame"

// freePort is a TCP port on 127.0.0.1 that nothing listened on a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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
