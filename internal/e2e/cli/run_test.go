package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// runScript prints two lines and exits 3, in the syntax of every shell
// tested (bash, zsh, fish, sh).
const runScript = `sh -c 'printf "alpha\nbeta\n"; exit 3'`

// shellHome returns the environment flags of a test shell (e2e.ShellEnv's,
// with a home of its own). Call it before e2e.NewEnv: the home is removed
// after the env's sessions have ended. fish finds its completions already
// generated there, so it starts no generator that outlives the test.
func shellHome(t *testing.T) []string {
	home, err := os.MkdirTemp("", "tkhome")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	os.MkdirAll(filepath.Join(home, ".local", "share", "fish", "generated_completions"), 0o755)
	return []string{"--env", "HOME=" + home, "--env", "PS1=$ ", "--env", "HISTFILE=" + filepath.Join(home, ".bash_history")}
}

// termkeep run types a command at a shell's prompt and prints only that
// command's output, with its status, in bash, zsh and fish with shell
// integration; the session's shell state (the API's shell) follows, and
// comes back the same after a server is killed and started again.
func TestRunCommandInShells(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	home := shellHome(t)
	e := e2e.NewEnv(t)
	e.StartServer()
	var ids, shells []string
	for _, sh := range []string{"bash", "zsh", "fish"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("%s is not installed (make test installs it): skipped", sh)
			continue
		}
		id := strings.TrimSpace(e.MustTk(append(append([]string{"new"}, home...), "--", path)...))
		// At once: run waits for the new shell's first prompt.
		out, errs, code := e.Tk("run", id, "--timeout", "30s", "--", runScript)
		if code != 3 || out != "alpha\nbeta\n" {
			t.Fatalf("%s: run = %d, stdout %q, stderr %q; want 3 and the two lines", sh, code, out, errs)
		}
		if strings.Contains(errs, "no shell integration") {
			t.Fatalf("%s: run fell back: %s", sh, errs)
		}
		// run ends at the command's end mark; the prompt follows.
		e2e.WaitFor(t, 10*time.Second, sh+" at its prompt", func() bool { return e.Session(id).Shell.State == "prompt" })
		s := e.Session(id)
		if s.Shell.State != "prompt" || s.Shell.Last == nil || s.Shell.Last.Status == nil || *s.Shell.Last.Status != 3 ||
			s.Shell.Last.Command != runScript || !s.Shell.Last.HasOutput {
			t.Fatalf("%s: shell state after run: %+v %+v", sh, s.Shell, s.Shell.Last)
		}
		// Its output range in the log is the command's output, after the
		// echo of the typed line.
		raw := e.MustTk("capture", "--raw", id)
		if got := raw[s.Shell.Last.OutputStart:s.Shell.Last.OutputEnd]; !strings.Contains(got, "alpha\r\nbeta\r\n") || strings.Contains(got, "exit 3") {
			t.Fatalf("%s: output range holds %q", sh, got)
		}
		if !strings.Contains(raw[:s.Shell.Last.OutputStart], "exit 3") {
			t.Fatalf("%s: the echo is not before the output range: %q", sh, raw[:s.Shell.Last.OutputStart])
		}
		if out, errs, code := e.Tk("run", id, "--", "echo ok"); code != 0 || out != "ok\n" {
			t.Fatalf("%s: run echo = %d %q %q", sh, code, out, errs)
		}
		// Several lines, a directory and a variable for this command alone.
		sub := t.TempDir()
		script := "echo \"in $PWD with [$RUN_VAR]\"\nfor i in 1 2\necho \"line\t$i\"\nend"
		if sh != "fish" {
			script = "echo \"in $PWD with [$RUN_VAR]\"\nfor i in 1 2; do\n  echo \"line\t$i\"\ndone"
		}
		out, errs, code = e.Tk("run", id, "--cwd", sub, "--env", "RUN_VAR=a b", "--", script)
		if want := "in " + sub + " with [a b]\nline\t1\nline\t2\n"; code != 0 || out != want {
			t.Fatalf("%s: run of several lines = %d %q %q; want %q", sh, code, out, errs, want)
		}
		if out, _, _ := e.Tk("run", id, "--", `echo "[$RUN_VAR]"`); out != "[]\n" {
			t.Fatalf("%s: --env outlived its command: %q", sh, out)
		}
		if _, errs, code := e.Tk("run", id, "--env", "1X=y", "--", "true"); code != 2 || !strings.Contains(errs, "--env") {
			t.Fatalf("%s: a bad --env = %d %q; want a usage error", sh, code, errs)
		}
		// A command still running: run times out with 124, and the next
		// run refuses to type into it.
		if _, _, code := e.Tk("run", id, "--timeout", "1s", "--", "sleep 30"); code != 124 {
			t.Fatalf("%s: run past its timeout = %d, want 124", sh, code)
		}
		e2e.WaitFor(t, 10*time.Second, sh+" running sleep", func() bool { return e.Session(id).Shell.State == "running" })
		if _, errs, code := e.Tk("run", id, "--", "echo no"); code != 1 || !strings.Contains(errs, "not at its prompt") {
			t.Fatalf("%s: run into a running command = %d %q", sh, code, errs)
		}
		e.MustTk("send", id, "--key", "C-c")
		e2e.WaitFor(t, 10*time.Second, sh+" back at its prompt", func() bool { return e.Session(id).Shell.State == "prompt" })
		if out, _, code := e.Tk("run", id, "--", "echo again"); code != 0 || out != "again\n" {
			t.Fatalf("%s: run after C-c = %d %q", sh, code, out)
		}
		ids, shells = append(ids, id), append(shells, sh)
	}
	// A new server rebuilds each shell's state from the log's tail.
	e.KillServer()
	e.StartServer()
	for i, id := range ids {
		s := e.Session(id)
		if s.Shell == nil || s.Shell.State != "prompt" || s.Shell.Last == nil || s.Shell.Last.Command != "echo again" ||
			*s.Shell.Last.Status != 0 || !s.Shell.Last.HasOutput || s.Shell.Last.OutputEnd <= s.Shell.Last.OutputStart {
			t.Fatalf("%s after a restart: %+v %+v", shells[i], s.Shell, s.Shell.Last)
		}
	}
}

// Without shell integration (sh, or bash and fish made with
// --no-shell-integration)
// run ends the command with a marker of its own, says so, and still prints
// only the output and exits with the status.
func TestRunCommandFallsBack(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	home := shellHome(t)
	e := e2e.NewEnv(t)
	e.StartServer()
	shells := [][]string{{"sh"}}
	for _, sh := range []string{"bash", "fish"} {
		if path, err := exec.LookPath(sh); err == nil && !testing.Short() {
			shells = append(shells, []string{"--no-shell-integration", path})
		}
	}
	for _, sh := range shells {
		args := append(append([]string{"new"}, home...), sh[:len(sh)-1]...)
		id := strings.TrimSpace(e.MustTk(append(append(args, "--"), sh[len(sh)-1])...))
		if s := e.Session(id); s.Shell == nil || s.Shell.State != "unknown" {
			t.Fatalf("%v: shell state %+v, want unknown", sh, s.Shell)
		}
		out, errs, code := e.Tk("run", id, "--timeout", "30s", "--", runScript)
		if code != 3 || out != "alpha\nbeta\n" || !strings.Contains(errs, "no shell integration") {
			t.Fatalf("%v: run = %d, stdout %q, stderr %q", sh, code, out, errs)
		}
		if out, _, code := e.Tk("run", id, "--", "printf 'no newline'"); code != 0 || out != "no newline\n" {
			t.Fatalf("%v: run printf = %d %q", sh, code, out)
		}
	}
	// Usage errors exit 2, other errors 1, each in one line.
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run", "x"}, 2, "needs a SESSION and a COMMAND"},
		{[]string{"run", "", "--", "ls"}, 2, "SESSION is empty"},
		{[]string{"run", "x", "--", " "}, 2, "COMMAND is empty"},
		{[]string{"run", "x", "--env", "A", "--", "ls"}, 2, "--env"},
		{[]string{"run", "nosuch", "--", "ls"}, 1, `no session "nosuch"`},
	} {
		_, errs, code := e.Tk(c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("termkeep %q: exit %d, stderr %q; want %d mentioning %q", c.args, code, errs, c.code, c.msg)
		}
	}
	// A session that has ended: it says how to start it again.
	id := strings.TrimSpace(e.MustTk("new", "--", "true"))
	e.Tk("wait", id, "--from", "start", "--exit", "--timeout", "20s")
	if _, errs, code := e.Tk("run", id, "--", "ls"); code != 1 || !strings.Contains(errs, "termkeep restore") {
		t.Errorf("run in an ended session: exit %d %q", code, errs)
	}
}

// wait --output matches only what is printed after it starts, unless
// --from says otherwise: output printed before (the shell's echo of a line
// sent, or an old run's result) does not end it.
func TestWaitOutputIsNewOutputOnly(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--", "sh"))
	e.MustTk("send", id, "echo seen-$((6*7))")
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "seen-42", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait --from start = %d %s", code, errs)
	}
	if _, _, code := e.Tk("wait", id, "--output", "seen-42", "--timeout", "1s"); code != 124 {
		t.Fatalf("wait matched output printed before it started: exit %d, want 124", code)
	}
	// Printed while it waits: found.
	cmd := exec.Command(e2e.TkBin, "--state-dir", e.Dir, "--no-autostart", "wait", id, "--output", "later-42", "--timeout", "20s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	e.MustTk("send", id, "echo later-$((6*7))")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wait for new output: %v", err)
	}
}

// wait --exit --status-only prints the child's status and exits 0, so a
// failed command (status 2) is not taken for a usage error.
func TestWaitExitStatusOnly(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--", "sh", "-c", "exit 2"))
	out, errs, code := e.Tk("wait", id, "--exit", "--status-only", "--timeout", "20s")
	if code != 0 || out != "2\n" {
		t.Fatalf("wait --exit --status-only = %d, stdout %q, stderr %q; want 0 and \"2\"", code, out, errs)
	}
	if _, _, code := e.Tk("wait", id, "--exit", "--timeout", "20s"); code != 2 {
		t.Fatalf("wait --exit = %d, want the child's 2", code)
	}
	if _, _, code := e.Tk("wait", id, "--output", "x", "--status-only"); code != 2 {
		t.Fatalf("--status-only without --exit = %d, want a usage error", code)
	}
}

// A user's prompt hook runs between a command's end mark and its next
// prompt: what is typed then waits for whatever reads the terminal first.
// run waits for the prompt, so a program the next command starts (rm -i)
// is never typed into: the run after it is refused, and the file stays.
func TestRunNeverTypesIntoAWaitingProgram(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel()
	for _, sh := range []struct{ name, rc, hook string }{
		{"bash", ".bashrc", "PROMPT_COMMAND='sleep 2'\n"},
		{"zsh", ".zshrc", "slowhook() { sleep 2 }\nprecmd_functions+=(slowhook)\n"},
	} {
		t.Run(sh.name, func(t *testing.T) {
			path, err := exec.LookPath(sh.name)
			if err != nil {
				t.Skipf("%s is not installed (make test installs it)", sh.name)
			}
			home := shellHome(t)
			dir := strings.TrimPrefix(home[1], "HOME=")
			if err := os.WriteFile(filepath.Join(dir, sh.rc), []byte(sh.hook), 0o644); err != nil {
				t.Fatal(err)
			}
			victim := filepath.Join(dir, "victim.txt")
			if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			e := e2e.NewEnv(t)
			e.StartServer()
			id := strings.TrimSpace(e.MustTk(append(append([]string{"new"}, home...), "--", path)...))
			if out, errs, code := e.Tk("run", id, "--timeout", "30s", "--", "echo warm"); code != 0 || out != "warm\n" {
				t.Fatalf("run echo = %d %q %q", code, out, errs)
			}
			if _, errs, code := e.Tk("run", id, "--timeout", "30s", "--", "true"); code != 0 {
				t.Fatalf("run true = %d %q", code, errs)
			}
			if _, errs, code := e.Tk("run", id, "--timeout", "5s", "--", "rm -i "+victim); code != 124 {
				t.Fatalf("run rm -i = %d %q, want its timeout (124)", code, errs)
			}
			if _, errs, code := e.Tk("run", id, "--", "y_next_command"); code != 1 || !strings.Contains(errs, "not at its prompt") {
				t.Fatalf("run into rm's question = %d %q, want a refusal", code, errs)
			}
			if _, err := os.Stat(victim); err != nil {
				t.Fatalf("the file rm -i asked about is gone: %v", err)
			}
		})
	}
}
