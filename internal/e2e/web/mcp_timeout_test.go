package web

import (
	"path/filepath"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// run_command's on_timeout: a command still running at timeout_ms is
// left, interrupted (Ctrl-C) or killed (SIGKILL to its process group),
// and the shell survives each to run the next command.
func TestMCPRunCommandOnTimeout(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	c, id := mcpBash(t, t.TempDir())

	for _, tc := range []struct {
		how, command, result string
		code                 float64
	}{
		{"interrupt", "sleep 30", "interrupted", 130},
		// A program that ignores SIGINT is only killed.
		{"kill", "trap '' INT; sleep 30", "killed", 137},
	} {
		r := c.tool("run_command", map[string]any{"session": id, "command": tc.command, "timeout_ms": 1000, "on_timeout": tc.how})
		if r["timed_out"] != true || r["on_timeout_result"] != tc.result || r["exit_code"] != tc.code {
			t.Fatalf("%s: %v", tc.how, r)
		}
		// The shell is the session's still: the next command runs.
		r = c.tool("run_command", map[string]any{"session": id, "command": "echo alive-" + tc.how})
		if r["exit_code"] != float64(0) || r["output"] != "alive-"+tc.how+"\n" {
			t.Fatalf("after %s: %v", tc.how, r)
		}
	}
	r := c.tool("run_command", map[string]any{"session": id, "command": "sleep 2", "timeout_ms": 300})
	if r["timed_out"] != true || r["on_timeout_result"] != "left" {
		t.Fatalf("leave: %v", r)
	}
	if _, text, isErr := c.try("run_command", map[string]any{"session": id, "command": "true", "on_timeout": "explode"}); !isErr {
		t.Fatalf("an unknown on_timeout was taken: %s", text)
	}
}

// mcpBash starts a server and an MCP client, both with HOME at home
// (where bash reads its .bashrc) and there, and a bash session at its
// first prompt.
func mcpBash(t *testing.T, home string) (*sdkClient, string) {
	t.Helper()
	return mcpShell(t, home, "bash")
}

// mcpShell is mcpBash with another shell.
func mcpShell(t *testing.T, home, shell string) (*sdkClient, string) {
	t.Helper()
	e := e2e.NewEnv(t)
	env := []string{"HOME=" + home, "HISTFILE=" + filepath.Join(home, "hist")}
	e.ServerEnv = env
	e.StartServer()
	c := startSDKClient(t, e, home, env)
	id := c.tool("create_session", map[string]any{"command": []string{shell}})["id"].(string)
	e2e.WaitFor(t, 15*time.Second, "the shell's first prompt", func() bool { return c.activity(id)["state"] == "at_prompt" })
	return c, id
}
