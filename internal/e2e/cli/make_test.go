package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// make test installs with apt-get the programs some tests run when they
// are missing: it says which and why before apt-get runs, and as another
// user it installs nothing and says how to. The README names each.
func TestMakeTestSaysWhatItInstalls(t *testing.T) {
	t.Parallel()
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	root, _ := filepath.Abs(filepath.Join("..", "..", ".."))
	pkgs := []string{"tmux", "zsh", "fish", "dbus-daemon", "vim-tiny"}
	for _, uid := range []string{"0", "1000"} {
		// A PATH with none of the programs: a fake id and apt-get, which
		// says it ran.
		bin := t.TempDir()
		fake := map[string]string{"id": "echo " + uid, "apt-get": `echo "APT-GET $*"`}
		for name, body := range fake {
			if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(mk, "--no-print-directory", "-s", "-C", root, "test-deps")
		cmd.Env = []string{"PATH=" + bin, "HOME=" + t.TempDir()}
		b, err := cmd.CombinedOutput()
		out := string(b)
		if err != nil {
			t.Fatalf("uid %s: make test-deps: %v\n%s", uid, err, out)
		}
		said := strings.Index(out, "apt-get")
		ran := strings.Index(out, "APT-GET")
		for _, p := range pkgs {
			if !strings.Contains(out, p+" (") {
				t.Errorf("uid %s: make does not say why it wants %s:\n%s", uid, p, out)
			}
		}
		if uid == "0" {
			if ran < 0 || said < 0 || said > ran {
				t.Errorf("as root: make did not say what it installs before apt-get ran:\n%s", out)
			}
		} else if ran >= 0 || !strings.Contains(out, "sudo apt-get install -y "+strings.Join(pkgs, " ")) {
			t.Errorf("not root: make ran apt-get, or did not say how to:\n%s", out)
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, testing, _ := strings.Cut(string(readme), "## Testing")
	for _, p := range append(pkgs, "chromium") {
		if !strings.Contains(testing, p) {
			t.Errorf("README's Testing section does not name %s, which make test installs", p)
		}
	}
}
