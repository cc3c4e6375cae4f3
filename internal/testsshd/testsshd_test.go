package testsshd

import (
	"os/exec"
	"strings"
	"testing"
)

// The ssh command line it gives logs in with its key and runs a command;
// Close ends sshd and removes its directory.
func TestStart(t *testing.T) {
	if why := Missing(); why != "" {
		t.Skip(why)
	}
	s, err := Start(Options{Locked: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	argv := append(strings.Fields(s.SSH), "-o", "BatchMode=yes", "-T", "127.0.0.1", `echo "in $HOME"`)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "in "+s.Home {
		t.Errorf("ssh said %q, %v; want %q", out, err, "in "+s.Home)
	}
	// The locked key needs its passphrase, which batch mode cannot ask.
	argv = append(strings.Fields(s.LockedSSH), "-o", "BatchMode=yes", "-T", "127.0.0.1", "true")
	if err := exec.Command(argv[0], argv[1:]...).Run(); err == nil {
		t.Error("the locked key logged in without its passphrase")
	}
	if got := s.Through(s.SSH, 1); !strings.Contains(got, " -p 1 ") {
		t.Errorf("Through(SSH, 1) = %q", got)
	}
	s.Close()
	if err := exec.Command("test", "-e", s.Dir).Run(); err == nil {
		t.Errorf("%s is left after Close", s.Dir)
	}
}
