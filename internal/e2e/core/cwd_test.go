package core

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
)

// The working directory is followed without the shell's help (/proc) and
// from OSC 7; it reaches the registry (ls) and meta.json.
func TestWorkingDirectoryIsTracked(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	base := t.TempDir()
	spaced := filepath.Join(base, "a b")
	os.Mkdir(spaced, 0o755)
	id := strings.TrimSpace(e.MustTk("new", "--cwd", base, "--", "sh"))
	if s := e.Session(id); s.Cwd != base {
		t.Fatalf("cwd at start %q, want %q", s.Cwd, base)
	}
	e.MustTk("send", id, "cd '"+spaced+"'")
	e2e.WaitFor(t, 10*time.Second, "the registry to show the new directory", func() bool { return e.Session(id).Cwd == spaced })
	e2e.WaitFor(t, 10*time.Second, "meta.json to show it", func() bool {
		m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", id))
		return err == nil && m.Cwd == spaced
	})
	found := false
	for _, s := range e.Ls() {
		found = found || (s.ID == id && s.Cwd == spaced)
	}
	if !found {
		t.Fatal("ls --json does not show the directory")
	}
	// A shell that reports its directory with OSC 7 (as shell integration
	// does) is believed, percent-decoding included.
	time.Sleep(1100 * time.Millisecond)
	e.MustTk("send", id, `printf '\033]7;file://localhost/srv/x%%20y\033\\'; echo`)
	e2e.WaitFor(t, 10*time.Second, "the OSC 7 directory", func() bool { return e.Session(id).Cwd == "/srv/x y" })
}

// Secrets in the environment reach the child but never a file of the state
// directory; the allowlist and --keep-env decide what meta.json keeps.
func TestEnvironmentSecretsStayOffDisk(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	cmd := exec.Command(e2e.TkBin, "--state-dir", e.Dir, "--no-autostart", "new", "--name", "env",
		"--env", "GITHUB_TOKEN=ghp_tokenvalue123", "--env", "VISIBLE=yes", "--keep-env", "EDITOR",
		"--keep-env", "MY_PASSWORD", "--", "sh")
	cmd.Env = append(os.Environ(), "AWS_SECRET_ACCESS_KEY=awssecretvalue456", "EDITOR=vi", "MY_PASSWORD=pw789", "UNLISTED=nope")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("new: %v %s", err, out)
	}
	// The child has them all.
	e.MustTk("send", "env", `echo "[$GITHUB_TOKEN|$AWS_SECRET_ACCESS_KEY|$MY_PASSWORD]" | tr a-z A-Z`)
	if _, errs, code := e.Tk("wait", "env", "--from", "start", "--output", "[GHP_TOKENVALUE123|AWSSECRETVALUE456|PW789]", "--timeout", "20s"); code != 0 {
		t.Fatalf("the child lacks its environment: %s", errs)
	}
	e.ShutdownServer()
	// No file of the state directory holds a secret (the output log holds
	// what the shell printed, upper-cased above so it cannot match).
	filepath.Walk(e.Dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || fi.Mode()&os.ModeSocket != 0 {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, secret := range []string{"ghp_tokenvalue123", "awssecretvalue456", "pw789"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds the secret %q", p, secret)
			}
		}
		return nil
	})
	matches, _ := filepath.Glob(filepath.Join(e.Dir, "sessions", "*"))
	m, err := sessiondir.ReadMeta(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	kept := strings.Join(m.Env, " ")
	for _, want := range []string{"VISIBLE=yes", "EDITOR=vi", "TERM=xterm-256color"} {
		if !strings.Contains(kept, want) {
			t.Errorf("meta.json env %q lacks %s", kept, want)
		}
	}
	if strings.Contains(kept, "UNLISTED") || strings.Contains(kept, "PASSWORD") || strings.Contains(kept, "TOKEN") {
		t.Errorf("meta.json env keeps too much: %q", kept)
	}
}

// `cd` into a directory with a space in bash, zsh and fish, with shell
// integration (OSC 7) and without it (/proc): the registry follows.
func TestShellsReportTheirDirectory(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	base := t.TempDir()
	spaced := filepath.Join(base, "a b")
	os.Mkdir(spaced, 0o755)
	for _, sh := range []string{"bash", "zsh", "fish"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("%s is not installed (make test installs it): skipped", sh)
			continue
		}
		for _, integration := range []bool{true, false} {
			args := append([]string{"new", "--cwd", base}, e2e.ShellEnv(t)...)
			if !integration {
				args = append(args, "--no-shell-integration")
			}
			id := strings.TrimSpace(e.MustTk(append(args, "--", path)...))
			if s := e.Session(id); s.ShellIntegration != integration {
				t.Fatalf("%s: shell_integration %v, want %v", sh, s.ShellIntegration, integration)
			}
			e.MustTk("send", id, "cd '"+spaced+"'")
			e2e.WaitFor(t, 10*time.Second, sh+" in "+spaced, func() bool { return e.Session(id).Cwd == spaced })
			if integration {
				// The shell said so itself: OSC 7 is in its output.
				if out := e.MustTk("capture", "--raw", id); !strings.Contains(out, "a%20b") {
					t.Fatalf("%s with integration printed no OSC 7 for %s", sh, spaced)
				}
			}
			e.MustTk("kill", id)
		}
	}
}
