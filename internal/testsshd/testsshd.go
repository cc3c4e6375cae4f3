// Package testsshd starts a private sshd on 127.0.0.1 for tests and
// benchmarks: its own host key, a user key of its own as the only one it
// lets in (this user's), a free port, and an ssh command line that trusts
// exactly that host key. Nothing of the user's ~/.ssh is read or written.
//
// sshd runs in the foreground in a process group of its own, so Close
// ends it with every connection's sshd.
package testsshd

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Path is where Debian's openssh-server puts sshd.
const Path = "/usr/sbin/sshd"

// Alias is the name the host key is known by (ssh's HostKeyAlias): the
// same whatever port, a proxy's included, ssh is given.
const Alias = "termkeep-test"

// Missing says why no sshd can be started here ("" when one can): sshd
// or ssh-keygen is not installed.
func Missing() string {
	if _, err := os.Stat(Path); err != nil {
		return fmt.Sprintf("no sshd at %s (openssh-server)", Path)
	}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		return "no ssh-keygen (openssh-client)"
	}
	return ""
}

// Options are what a Server has beyond its one key.
type Options struct {
	// Locked, when set, is the passphrase of a second authorized key,
	// which no agent holds (Server.LockedSSH).
	Locked string
}

// Server is a running sshd.
type Server struct {
	// Dir holds its keys, configuration and log; Home is the HOME its
	// logins get (an empty directory of Dir's: the machine's rc files
	// apply, not the user's).
	Dir, Home string
	Port      int
	// SSH is the ssh command line (TERMKEEP_SSH) that reaches it with
	// its key; LockedSSH the same with the locked key (Options.Locked).
	SSH, LockedSSH string

	cmd    *exec.Cmd
	exited chan struct{}
}

// Start starts an sshd and returns once it listens (within 10 s). The
// caller must Close it.
func Start(opts Options) (*Server, error) {
	if why := Missing(); why != "" {
		return nil, errors.New(why)
	}
	if os.Getuid() == 0 {
		// sshd run by root separates privileges into this empty
		// directory, which the service's unit makes.
		os.MkdirAll("/run/sshd", 0o755)
	}
	dir, err := os.MkdirTemp("", "sd")
	if err != nil {
		return nil, err
	}
	s, err := start(dir, opts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func start(dir string, opts Options) (*Server, error) {
	keys := map[string]string{"host": "", "user": ""}
	if opts.Locked != "" {
		keys["locked"] = opts.Locked
	}
	var authorized []byte
	for k, passphrase := range keys {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ssh-keygen: %w: %s", err, out)
		}
		if k != "host" {
			pub, err := os.ReadFile(filepath.Join(dir, k+".pub"))
			if err != nil {
				return nil, err
			}
			authorized = append(authorized, pub...)
		}
	}
	hostPub, err := os.ReadFile(filepath.Join(dir, "host.pub"))
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Home: filepath.Join(dir, "home"), Port: port, exited: make(chan struct{})}
	for name, b := range map[string][]byte{
		"authorized_keys": authorized,
		"known_hosts":     fmt.Appendf(nil, "%s %s", Alias, hostPub),
		"sshd_config": fmt.Appendf(nil, `Port %d
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
`, port, s.Home, filepath.Join(dir, "host"), filepath.Join(dir, "authorized_keys")),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return nil, err
		}
	}
	if err := os.Mkdir(s.Home, 0o700); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "sshd.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	s.cmd = exec.Command(Path, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start sshd: %w", err)
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	if err := s.listening(10 * time.Second); err != nil {
		s.stop()
		return nil, err
	}
	opt := fmt.Sprintf("-F /dev/null -p %d -o IdentitiesOnly=yes -o HostKeyAlias=%s -o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes -o LogLevel=ERROR",
		port, Alias, filepath.Join(dir, "known_hosts"))
	s.SSH = fmt.Sprintf("ssh %s -i %s", opt, filepath.Join(dir, "user"))
	if opts.Locked != "" {
		s.LockedSSH = fmt.Sprintf("ssh %s -i %s", opt, filepath.Join(dir, "locked"))
	}
	return s, nil
}

// listening waits until sshd takes connections, for at most d.
func (s *Server) listening(d time.Duration) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
	for deadline := time.Now().Add(d); ; {
		select {
		case <-s.exited:
			return fmt.Errorf("sshd exited: %s", s.Log())
		default:
		}
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sshd does not listen on %s after %v: %s", addr, d, s.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Through is ssh command line ssh (SSH or LockedSSH) going to port
// instead of sshd's own: a proxy in front of it.
func (s *Server) Through(ssh string, port int) string {
	return strings.Replace(ssh, "-p "+strconv.Itoa(s.Port), "-p "+strconv.Itoa(port), 1)
}

// Log is what sshd has said.
func (s *Server) Log() []byte {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "sshd.log"))
	return b
}

// Close ends sshd and every connection's sshd, and removes Dir.
func (s *Server) Close() {
	s.stop()
	os.RemoveAll(s.Dir)
}

func (s *Server) stop() {
	// The connections' own sshd processes are in its group.
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
}

// FreePort is a TCP port on 127.0.0.1 that nothing listened on a moment
// ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
