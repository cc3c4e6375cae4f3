package web

import (
	"os"
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
// hook (PROMPT_COMMAND) delays every prompt, as in the report.
func TestMCPRunCommandRefusesAReader(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("PROMPT_COMMAND='sleep 3'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(home, "victim.txt")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, id := mcpBash(t, home)

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
}
