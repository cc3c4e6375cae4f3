package web

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
)

func num(v any) uint64 {
	f, _ := v.(float64)
	return uint64(f)
}

// TestMCPStdio drives a shell through `termkeep mcp` as an agent would.
func TestMCPStdio(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	m := e2e.StartMCPArgs(t, e, []string{"--env-allow", "PS1"}, "PS1=tk$ ") // the prompt is no default of a child's
	m.Initialize()

	v := m.Call("tools/list", map[string]any{})
	tools, _ := v["result"].(map[string]any)["tools"].([]any)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	for _, want := range []string{"list_sessions", "create_session", "send_input", "read_screen", "read_output", "wait_for", "kill_session"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Fatalf("tools/list has %v, not %s", names, want)
		}
	}

	shell := []string{"sh"}
	if _, err := exec.LookPath("bash"); err == nil {
		shell = []string{"bash", "--norc"}
	}
	created := m.Tool("create_session", map[string]any{"command": shell, "name": "agent-sh"})
	id, _ := created["id"].(string)
	if id == "" {
		t.Fatalf("create_session: %v", created)
	}
	if r := m.Tool("wait_for", map[string]any{"session": id, "text": "tk$", "timeout_ms": 15000}); r["matched"] != true {
		t.Fatalf("no prompt: %v", r)
	}

	sent := m.Tool("send_input", map[string]any{"session": "agent-sh", "text": "echo hi", "enter": true})
	from := num(sent["offset"])
	// On the screen, and in the output after the input: the line "hi"
	// that echo printed, not the command line that contains it.
	if r := m.Tool("wait_for", map[string]any{"session": id, "text": "hi", "timeout_ms": 15000}); r["matched"] != true || r["where"] != "screen" {
		t.Fatalf("wait_for hi on the screen: %v", r)
	}
	hi := m.Tool("wait_for", map[string]any{"session": id, "regex": "(?m)^hi$", "offset": from, "timeout_ms": 15000})
	if hi["matched"] != true || hi["text"] != "hi" || num(hi["offset"]) < from {
		t.Fatalf("wait_for hi in the output: %v", hi)
	}
	if r := m.Tool("wait_for", map[string]any{"session": id, "text": "tk$ ", "offset": num(hi["end_offset"]), "timeout_ms": 15000}); r["matched"] != true {
		t.Fatalf("no prompt after hi: %v", r)
	}
	_, screen, isErr := m.Try("read_screen", map[string]any{"session": id})
	if isErr || !strings.Contains(screen, "echo hi\nhi\n") {
		t.Fatalf("read_screen: %q", screen)
	}

	// The output from offset 0, then from where it stopped: nothing twice.
	out := m.Tool("read_output", map[string]any{"session": id, "offset": 0})
	text, _ := out["text"].(string)
	if !strings.Contains(text, "echo hi\nhi\n") || strings.Contains(text, "\x1b") || strings.Contains(text, "\r") {
		t.Fatalf("read_output from 0: %q", text)
	}
	next := num(out["next_offset"])
	if next == 0 || next != num(out["end_offset"]) || out["more"] != false {
		t.Fatalf("read_output from 0: %v", out)
	}
	again := m.Tool("read_output", map[string]any{"session": id, "offset": next})
	if again["text"] != "" || num(again["next_offset"]) != next {
		t.Fatalf("read_output from next_offset %d: %v", next, again)
	}
	raw := m.Tool("read_output", map[string]any{"session": id, "offset": 0, "max_bytes": 1 << 20, "raw": true})
	if rt, _ := raw["text"].(string); !strings.Contains(rt, "hi\r\n") {
		t.Fatalf("raw output: %q", rt)
	}

	// A foreground program, interrupted with Ctrl-C: the prompt comes back.
	m.Tool("send_input", map[string]any{"session": id, "text": "sleep 100", "enter": true})
	m.Tool("wait_for", map[string]any{"session": id, "quiet_ms": 300, "timeout_ms": 10000})
	back := false
	for i := 0; i < 3 && !back; i++ {
		sent := m.Tool("send_input", map[string]any{"session": id, "keys": []string{"Ctrl-C"}})
		r := m.Tool("wait_for", map[string]any{"session": id, "text": "tk$ ", "offset": num(sent["offset"]), "timeout_ms": 5000})
		back = r["matched"] == true
	}
	if !back {
		t.Fatal("Ctrl-C did not bring the prompt back")
	}

	list := m.Tool("list_sessions", nil)
	sessions, _ := list["sessions"].([]any)
	if len(sessions) != 1 || sessions[0].(map[string]any)["name"] != "agent-sh" || sessions[0].(map[string]any)["state"] != "running" {
		t.Fatalf("list_sessions: %v", list)
	}

	killed := m.Tool("kill_session", map[string]any{"session": id})
	if killed["state"] != "closed" {
		t.Fatalf("kill_session: %v", killed)
	}
	if r := m.Tool("wait_for", map[string]any{"session": id, "exit": true, "timeout_ms": 10000}); r["exited"] != true || r["state"] != "closed" {
		t.Fatalf("wait_for exit after kill: %v", r)
	}
	if _, text, isErr := m.Try("send_input", map[string]any{"session": id, "text": "x"}); !isErr || !strings.Contains(text, "closed") {
		t.Fatalf("input to a closed session: %v %q", isErr, text)
	}
}

// TestMCPErrors: what is wrong with a message is a JSON-RPC error, what is
// wrong with a call a tool error; either way the server keeps serving.
func TestMCPErrors(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	m := e2e.StartMCP(t, e)
	m.Initialize()

	// No server (and --no-autostart): a tool error saying so.
	if _, text, isErr := m.Try("list_sessions", nil); !isErr || !strings.Contains(text, "no termkeep server is running") {
		t.Fatalf("without a server: %v %q", isErr, text)
	}
	e.StartServer()

	m.Send(`{"jsonrpc":"2.0","id":"x","method":"tools/list"`)
	if v := m.Recv(10 * time.Second); v["id"] != nil || code(v) != -32700 {
		t.Fatalf("malformed JSON: %v", v)
	}
	m.Send(`{"jsonrpc":"2.0","id":"y","method":"tools/destroy"}`)
	if v := m.Recv(10 * time.Second); v["id"] != "y" || code(v) != -32601 {
		t.Fatalf("unknown method: %v", v)
	}
	if v := m.Call("tools/call", map[string]any{"name": "format_disk", "arguments": map[string]any{}}); code(v) != -32602 {
		t.Fatalf("unknown tool: %v", v)
	}
	if v := m.Call("tools/call", "read_screen"); code(v) != -32602 {
		t.Fatalf("params of the wrong shape: %v", v)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_screen", map[string]any{"session": "no-such"}, `no session "no-such"`},
		{"read_screen", map[string]any{"session": 7}, `argument "session" must be a string`},
		{"send_input", map[string]any{"session": "x", "keys": []string{"Ctrl-Å"}}, `unknown key`},
		{"wait_for", map[string]any{"session": "x"}, "give exactly one of"},
		{"create_session", map[string]any{"cwd": "/no/such/dir/anywhere"}, "/no/such/dir/anywhere"},
		{"kill_session", map[string]any{}, `"session" is required`},
	} {
		_, text, isErr := m.Try(tc.tool, tc.args)
		if !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v: isError %v, %q; want %q", tc.tool, tc.args, isErr, text, tc.want)
		}
	}
	// And it still answers.
	if v := m.Call("ping", nil); v["result"] == nil {
		t.Fatalf("ping after errors: %v", v)
	}
}

func code(v map[string]any) int {
	e, _ := v["error"].(map[string]any)
	f, _ := e["code"].(float64)
	return int(f)
}

// stubAgent writes an executable NAME into a new directory that prints its
// arguments and waits, and returns PATH with that directory first.
func stubAgent(t *testing.T, name string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	script := "#!/bin/sh\necho \"" + name + "-stub args:[$*] cwd:$(pwd)\"\nwhile read line; do echo \"got $line\"; done\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, dir + string(os.PathListSeparator) + os.Getenv("PATH")
}

// tkEnv runs the CLI with extra environment variables.
func tkEnv(e *e2e.Env, extraEnv []string, dir string, args ...string) (string, string, int) {
	e.T.Helper()
	return e.TkEnv(extraEnv, dir, args...)
}

// TestAgentPreset: `new --agent claude` runs the claude found on PATH in
// the workspace's directory, pinned to a conversation id of its own, and
// records `claude --resume ID`; a restore of a session that never had a
// conversation starts it afresh under the same id.
func TestAgentPreset(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	stubDir, path := stubAgent(t, "claude")
	pathEnv := []string{"PATH=" + path, "HOME=" + t.TempDir(), "CLAUDE_CONFIG_DIR="}
	e.ServerEnv = pathEnv
	e.StartServer()
	wsDir := t.TempDir()
	e.MustTk("workspace", "add", "proj", wsDir)

	out, errs, code := tkEnv(e, pathEnv, t.TempDir(), "new", "--agent", "claude", "--workspace", "proj", "--name", "cl")
	if code != 0 {
		t.Fatalf("new --agent claude: exit %d: %s", code, errs)
	}
	id := strings.TrimSpace(out)
	s := e.Session(id)
	conv := s.AgentConversation
	if s.Agent != "claude" || conv == "" || s.RestoreCommand != "claude --resume "+conv {
		t.Fatalf("agent %q, conversation %q, restore command %q", s.Agent, conv, s.RestoreCommand)
	}
	if strings.Join(s.Command, " ") != filepath.Join(stubDir, "claude")+" --session-id "+conv {
		t.Fatalf("command %q", s.Command)
	}
	if s.Cwd != wsDir {
		t.Fatalf("cwd %q, want the workspace's %q", s.Cwd, wsDir)
	}
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "claude-stub args:[--session-id "+conv+"] cwd:"+wsDir, "--timeout", "15s"); code != 0 {
		t.Fatalf("the stub did not start in the workspace: %s\n%s", errs, screenOf(e, id))
	}

	e.MustTk("kill", id)
	if out, errs, code := tkEnv(e, pathEnv, t.TempDir(), "restore", "cl"); code != 0 {
		t.Fatalf("restore: exit %d: %s %s", code, out, errs)
	}
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "claude has no conversation "+conv+" to resume", "--timeout", "15s"); code != 0 {
		t.Fatalf("the restore did not say it starts afresh: %s\n%s", errs, screenOf(e, id))
	}

	// The MCP tool's agent argument does the same.
	m := e2e.StartMCP(t, e, pathEnv...)
	m.Initialize()
	r := m.Tool("create_session", map[string]any{"agent": "claude", "workspace": "proj"})
	if rc, _ := r["restore_command"].(string); !strings.HasPrefix(rc, "claude --resume ") || r["cwd"] != wsDir {
		t.Fatalf("create_session agent claude: %v", r)
	}
	if w := m.Tool("wait_for", map[string]any{"session": r["id"], "text": "claude-stub args:[--session-id ", "timeout_ms": 15000}); w["matched"] != true {
		t.Fatalf("the agent's session: %v", w)
	}
}

func screenOf(e *e2e.Env, id string) string {
	s, _ := e.C.Screen(context.Background(), id, false, 0)
	return s
}

// TestAgentMissing: a missing agent is an error naming it and how to
// install it, before any server or session is touched.
func TestAgentMissing(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	empty := t.TempDir()
	// No server runs (and --no-autostart): the agent is looked for first.
	_, errs, code := tkEnv(e, []string{"PATH=" + empty}, empty, "new", "--agent", "codex")
	if code != 1 || !strings.Contains(errs, `no "codex" on PATH`) || !strings.Contains(errs, "npm install -g @openai/codex") {
		t.Fatalf("missing codex: exit %d: %s", code, errs)
	}
	_, errs, code = tkEnv(e, nil, empty, "new", "--agent", "vim")
	if code != 2 || !strings.Contains(errs, "claude, codex, gemini, aider") {
		t.Fatalf("unknown agent: exit %d: %s", code, errs)
	}
	e.StartServer()
	m := e2e.StartMCP(t, e, "PATH="+empty)
	m.Initialize()
	if _, text, isErr := m.Try("create_session", map[string]any{"agent": "gemini"}); !isErr || !strings.Contains(text, `no "gemini" on PATH`) {
		t.Fatalf("create_session with a missing agent: %v %q", isErr, text)
	}
	if list := e.Ls(); len(list) != 0 {
		t.Fatalf("sessions were created: %v", list)
	}
}

// TestQuietSince: a session that prints, then asks a question and waits,
// shows quiet_since 2-4 s into the pause, with a session.quiet event, and
// null again once it prints.
func TestQuietSince(t *testing.T) {
	e := e2e.NewEnv(t)
	e.ServerEnv = []string{"TERMKEEP_QUIET_AFTER=2s"} // off by default in these tests (e2e.Main)
	e.StartServer()
	script := `i=0; while [ $i -lt 15 ]; do echo working $i; sleep 0.2; i=$((i+1)); done; printf 'continue? '; read answer; while :; do echo flowing; sleep 0.2; done`
	id := strings.TrimSpace(e.MustTk("new", "--name", "asker", "--", "sh", "-c", script))
	// Polled through the API (a CLI run per look is slow under -race);
	// ls --json, which prints the same objects, is checked at the end.
	quietOf := func() *time.Time {
		s, err := e.C.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		return s.QuietSince
	}
	// While it works (3 s), it is not quiet.
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "working 1", "--timeout", "15s"); code != 0 {
		t.Fatalf("no output: %s", errs)
	}
	for i := 0; i < 4; i++ {
		if q := quietOf(); q != nil {
			t.Fatalf("quiet_since %v while output flows", q)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "continue? ", "--timeout", "15s"); code != 0 {
		t.Fatalf("no question: %s", errs)
	}
	seen := time.Now() // the question is on the screen by now
	var since *time.Time
	e2e.WaitFor(t, 6*time.Second, "quiet_since", func() bool { since = quietOf(); return since != nil })
	// quiet_since is when the pause began (the question's output, as the
	// server received it): it must show 2-4 s after that.
	if since.After(seen) {
		t.Fatalf("quiet_since %v is after the question was seen (%v)", since, seen)
	}
	if took := time.Since(*since); took < 2*time.Second || took > 4*time.Second {
		t.Fatalf("quiet_since showed %v into the pause; want 2-4 s", took)
	}
	var listed *time.Time
	for _, s := range e.Ls() {
		if s.ID == id {
			listed = s.QuietSince
		}
	}
	if listed == nil || !listed.Equal(*since) {
		t.Fatalf("ls --json shows quiet_since %v, the API %v", listed, since)
	}
	// The event, with the question as its prompt.
	var ev *api.Event
	e2e.WaitFor(t, 5*time.Second, "the session.quiet event", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e.C.Events(ctx, 0, false, func(x api.Event) error {
			if x.Kind == "session.quiet" && x.Session == id {
				ev = &x
			}
			return nil
		})
		return ev != nil
	})
	var detail map[string]any
	json.Unmarshal(ev.Detail, &detail)
	if detail["prompt"] != "continue?" {
		t.Fatalf("session.quiet detail %v", detail)
	}

	// Output flows again: quiet_since is null, and stays so.
	e.MustTk("send", id, "yes")
	e2e.WaitFor(t, 3*time.Second, "quiet_since to clear", func() bool { return quietOf() == nil })
	for i := 0; i < 8; i++ {
		if q := quietOf(); q != nil {
			t.Fatalf("quiet_since %v while output flows (check %d)", q, i)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
