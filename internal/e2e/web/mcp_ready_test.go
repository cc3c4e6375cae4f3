package web

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// A command left running at its timeout that asks a question (rm -i)
// owns the terminal: the next run_command is refused with a line naming
// the program the kernel says reads the terminal, and types nothing, so
// the answer meant for a prompt never reaches rm. The shell's slow prompt
// hook (bash's PROMPT_COMMAND, zsh's precmd) delays every prompt, as in
// the report.
func TestMCPRunCommandRefusesAReader(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	for _, tc := range []struct{ shell, rc, hook string }{
		{"bash", ".bashrc", "PROMPT_COMMAND='sleep 3'\n"},
		{"zsh", ".zshrc", "precmd() { sleep 3 }\n"},
	} {
		t.Run(tc.shell, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(tc.shell); err != nil {
				t.Skipf("%s is not installed (make test installs it)", tc.shell)
			}
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, tc.rc), []byte(tc.hook), 0o644); err != nil {
				t.Fatal(err)
			}
			victim := filepath.Join(home, "victim.txt")
			if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			c, id := mcpShell(t, home, tc.shell)
			// The report's steps: a command, a pause past the hook, another.
			if r := c.tool("run_command", map[string]any{"session": id, "command": "echo warm"}); r["exit_code"] != float64(0) {
				t.Fatalf("echo warm: %v", r)
			}
			if r := c.tool("run_command", map[string]any{"session": id, "command": "true"}); r["exit_code"] != float64(0) {
				t.Fatalf("true: %v", r)
			}
			// zsh's precmd runs after the end mark: while it does, the
			// session is not at its prompt, and a run_command whose time
			// runs out first says so and types nothing.
			if a := c.activity(id); a["state"] != "at_prompt" {
				_, text, isErr := c.try("run_command", map[string]any{"session": id, "command": "echo early", "timeout_ms": 200})
				if !isErr || !strings.Contains(text, "not at its prompt") {
					t.Fatalf("run_command during the prompt hooks (%v): %v %q", a, isErr, text)
				}
			}
			e2e.WaitFor(t, 10*time.Second, "the prompt after the hook", func() bool { return c.activity(id)["state"] == "at_prompt" })
			r := c.tool("run_command", map[string]any{"session": id, "command": "rm -i victim.txt", "timeout_ms": 1000, "on_timeout": "leave"})
			if r["timed_out"] != true || r["on_timeout_result"] != "left" {
				t.Fatalf("rm -i: %v", r)
			}
			var act map[string]any
			e2e.WaitFor(t, 5*time.Second, "rm to read the terminal", func() bool {
				act = c.activity(id)
				return act["state"] == "reading_terminal" && act["program"] == "rm" && act["kernel"] == true
			})
			_, text, isErr := c.try("run_command", map[string]any{"session": id, "command": "y"})
			if !isErr || !strings.Contains(text, "not at its prompt: rm (pid ") || !strings.Contains(text, "is reading the terminal") {
				t.Fatalf("run_command y while rm asks: %v %q", isErr, text)
			}
			t.Logf("refused: %s", text)
			if _, err := os.Stat(victim); err != nil {
				t.Fatalf("the file rm -i asked about is gone: %v", err)
			}
		})
	}
}
