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

// shellSessions starts an MCP client for e and, through it, a session of
// each of bash, zsh and fish that is installed, each at its first prompt.
// Their home is a fresh directory: no user's rc files, and fish's
// completions already generated, so it starts no generator that outlives
// the test.
func shellSessions(t *testing.T, e *e2e.Env) (c *sdkClient, ids map[string]string, home string) {
	t.Helper()
	home = t.TempDir()
	os.MkdirAll(filepath.Join(home, ".local", "share", "fish", "generated_completions"), 0o755)
	env := []string{"HOME=" + home, "HISTFILE=" + filepath.Join(home, "hist")}
	e.ServerEnv = env
	e.StartServer()
	c = startSDKClient(t, e, home, env)
	ids = map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("%s is not installed: skipped", sh)
			continue
		}
		ids[sh] = c.tool("create_session", map[string]any{"command": []string{path}})["id"].(string)
	}
	for sh, id := range ids {
		e2e.WaitFor(t, 20*time.Second, sh+"'s first prompt", func() bool { return c.activity(id)["state"] == "at_prompt" })
	}
	return c, ids, home
}

// run_command gives a command's output as the program printed it: tabs
// and trailing blanks kept, and nothing of zsh's end-of-line mark (its
// PROMPT_SP), in its text, its raw bytes and read_output of its range.
func TestMCPRunCommandExactText(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	c, ids, _ := shellSessions(t, e)
	const want = "a\tb  \n\tc\nno newline at end"
	if id, ok := ids["zsh"]; ok {
		// A hook of the user's that prints comes after the command's end.
		c.tool("run_command", map[string]any{"session": id, "command": `tkp() { print -n '<hook>' }; precmd_functions+=(tkp)`})
	}
	for sh, id := range ids {
		r := c.tool("run_command", map[string]any{"session": id, "command": `printf 'a\tb  \n\tc\nno newline at end'`})
		if r["output"] != want || r["exit_code"] != 0.0 {
			t.Errorf("%s: output %q, exit_code %v; want %q", sh, r["output"], r["exit_code"], want)
		}
		read := c.tool("read_output", map[string]any{"session": id, "offset": r["output_start"], "max_bytes": num(r["output_end"]) - num(r["output_start"])})
		if read["text"] != want {
			t.Errorf("%s: read_output of [output_start, output_end): %q, want %q", sh, read["text"], want)
		}
		r = c.tool("run_command", map[string]any{"session": id, "command": `printf '\033[31mred\033[0m\tx  \n'`, "raw": true})
		if out, _ := r["output"].(string); !strings.HasSuffix(out, "\x1b[31mred\x1b[0m\tx  \r\n") || strings.Contains(out, "133;") {
			t.Errorf("%s: raw output %q", sh, r["output"])
		}
	}
}

// run_command runs a command of several lines (a heredoc, a loop) as one,
// with one status and no continuation prompts, and a command in a
// directory and with variables of its own, which the next call does not
// see.
func TestMCPRunCommandScripts(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	c, ids, _ := shellSessions(t, e)
	dir := t.TempDir()
	for sh, id := range ids {
		script, want := "cat <<EOF\nline1\n\tline2\nEOF\nfor i in 1 2\ndo\n  echo \"$i\"\ndone\n(exit 3)", "line1\n\tline2\n1\n2\n"
		if sh == "fish" {
			script, want = "printf '%s\\n' line1 \\tline2\nfor i in 1 2\n  echo $i\nend\nsh -c 'exit 3'", "line1\n\tline2\n1\n2\n"
		}
		r := c.tool("run_command", map[string]any{"session": id, "command": script})
		if r["output"] != want || r["exit_code"] != 3.0 {
			t.Errorf("%s: a script: output %q, exit_code %v; want %q and 3", sh, r["output"], r["exit_code"], want)
		}
		before := c.tool("run_command", map[string]any{"session": id, "command": "pwd"})["output"]
		r = c.tool("run_command", map[string]any{"session": id, "command": "pwd; echo \"$TK_A\"; cd /", "cwd": dir, "env": map[string]any{"TK_A": "a b\tc"}})
		if r["output"] != dir+"\na b\tc\n" || r["exit_code"] != 0.0 || r["cwd"] != strings.TrimSuffix(before.(string), "\n") {
			t.Errorf("%s: cwd and env: %v; the shell was in %q", sh, r, before)
		}
		r = c.tool("run_command", map[string]any{"session": id, "command": "pwd; echo \"[$TK_A]\""})
		if r["output"] != before.(string)+"[]\n" {
			t.Errorf("%s: the next call: %q, want %q", sh, r["output"], before.(string)+"[]\n")
		}
	}
	for _, id := range ids {
		if _, text, isErr := c.try("run_command", map[string]any{"session": id, "command": "true", "cwd": "no/such/dir"}); !isErr || !strings.Contains(text, "not a directory") {
			t.Errorf("a cwd that is no directory: %v %q", isErr, text)
		}
		break
	}
}

// run_command without a session runs the command as the user's shell's
// -c in a session of its own, in the scope's workspace, which ends with
// it and can be read afterwards.
func TestMCPRunCommandOwnSession(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	dir := t.TempDir()
	c := startSDKClient(t, e, dir, []string{"SHELL=/bin/sh"}, "--workspace", "proj")
	r := c.tool("run_command", map[string]any{"command": "printf 'a\\tb  \\n'; pwd; echo \"$TK_A\" >&2; exit 4", "cwd": dir, "env": map[string]any{"TK_A": "x y"}})
	id, _ := r["session"].(string)
	if r["output"] != "a\tb  \n"+dir+"\nx y\n" || r["exit_code"] != 4.0 || id == "" {
		t.Fatalf("run_command without a session: %v", r)
	}
	var s map[string]any
	for _, v := range c.tool("list_sessions", nil)["sessions"].([]any) {
		if m := v.(map[string]any); m["id"] == id {
			s = m
		}
	}
	if s == nil || s["state"] != "exited" || s["exit_code"] != 4.0 || s["workspace"] != "proj" {
		t.Fatalf("its session: %v", s)
	}
	if read := c.tool("read_output", map[string]any{"session": id, "offset": 0}); read["text"] != r["output"] {
		t.Fatalf("read_output of its session: %q", read["text"])
	}
	r = c.tool("run_command", map[string]any{"command": "sleep 30", "timeout_ms": 300, "on_timeout": "kill"})
	if r["timed_out"] != true || r["on_timeout_result"] != "killed" {
		t.Fatalf("a command of its own session killed at its timeout: %v", r)
	}
}
