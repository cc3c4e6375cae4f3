package cli

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/statedir"
)

// readmeCommands returns the termkeep command lines of the README's shell
// blocks, comments cut off, in order.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in:
			if i := strings.Index(l, " #"); i >= 0 {
				l = l[:i]
			}
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "termkeep ") || strings.HasPrefix(l, "bin/termkeep ") {
				out = append(out, l)
			}
		}
	}
	return out
}

// Every termkeep command the README shows runs as printed: no unknown
// command or flag, no usage error. The session the first block makes (work)
// and a stand-in claude are made first, as a reader would
// have them; commands that wait or follow are cut short by a timeout.
func TestReadmeCommandsRun(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel()
	e := e2e.NewEnv(t)
	e.StartServer()
	home := t.TempDir()
	app := filepath.Join(home, "src", "app")
	os.MkdirAll(app, 0o755)
	os.WriteFile(filepath.Join(app, "Makefile"), []byte("all:\n\t@echo building; sleep 2\ntest:\n\t@echo All tests passed\n"), 0o644)
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\nexec sleep 600\n"), 0o755)
	// bin/termkeep as the first block has it, from a checkout's root.
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "bin"), 0o755)
	os.Symlink(e2e.TkBin, filepath.Join(root, "bin", "termkeep"))
	// A server the tour's commands start after its `shutdown` listens on a
	// port of its own, not the default one.
	env := append(os.Environ(), "HOME="+home, statedir.EnvVar+"="+e.Dir, "TERMKEEP_LISTEN=127.0.0.1:0",
		"PATH="+filepath.Dir(e2e.TkBin)+":"+bin+":"+os.Getenv("PATH"))

	run := func(line string, limit time.Duration) (string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Env, cmd.Dir = env, root
		// The whole group goes at the timeout: sh may not exec termkeep.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 2 * time.Second
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &errb, &errb
		err := cmd.Run()
		if ctx.Err() != nil {
			return errb.String(), -1 // cut short: it waits or follows, as shown
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return errb.String(), ee.ExitCode()
		}
		return errb.String(), 0
	}
	for _, setup := range []string{
		"termkeep new --name work --cwd ~/src/app -- sh",
	} {
		if out, code := run(setup, 30*time.Second); code != 0 {
			t.Fatalf("%s: exit %d: %s", setup, code, out)
		}
	}
	lines := readmeCommands(t)
	if len(lines) < 20 {
		t.Fatalf("found %d README commands; the test no longer finds the blocks", len(lines))
	}
	for _, line := range lines {
		switch {
		case strings.Contains(line, "["): // [--repair|--rebuild]: a choice, not a command
			continue
		case strings.Contains(line, " attach "): // needs a terminal: see the attach tests
			continue
		case strings.Contains(line, " service install") || strings.Contains(line, " service uninstall"):
			// They would install a real service on the machine that runs
			// the tests: TestServiceInstallUpgradeUninstall runs them
			// against a user manager of its own.
			continue
		}
		// Those that wait or follow are cut short; a usage error would
		// still show at once.
		limit := 30 * time.Second
		if strings.Contains(line, "--follow") || strings.Contains(line, "--output") {
			limit = 3 * time.Second
		}
		start := time.Now()
		out, code := run(line, limit)
		t.Logf("%s: exit %d in %.1fs", line, code, time.Since(start).Seconds())
		// Exit 2 with termkeep's own line is a usage error; `wait --exit`
		// passes on the child's status, and make's is 2 when interrupted.
		usage := code == 2 && strings.Contains(out, "termkeep: ")
		if usage || strings.Contains(out, "unknown flag") || strings.Contains(out, "unknown command") || strings.Contains(out, "unknown shorthand") {
			t.Errorf("README's `%s` does not run as printed: exit %d: %s", line, code, out)
		}
	}
}
