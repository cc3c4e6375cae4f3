package web

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// TestMCPWaitSurvivesServerKill: a server killed with SIGKILL during a
// blocking wait_for, and started again, does not end the wait: it carries
// on against the new server and returns the real exit status.
func TestMCPWaitSurvivesServerKill(t *testing.T) {
	t.Parallel()
	e, m := startMCPEnv(t)
	created := m.Tool("create_session", map[string]any{"command": "read line; exit 7"})
	id, _ := created["id"].(string)

	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 900, "method": "tools/call",
		"params": map[string]any{"name": "wait_for", "arguments": map[string]any{"session": id, "exit": true, "timeout_ms": 60000}}})
	m.Send(string(b))
	time.Sleep(500 * time.Millisecond) // the wait is under way
	e.KillServer()
	time.Sleep(300 * time.Millisecond) // the wait meets the dead server
	e.StartServer()
	e.MustTk("send", id, "bye")

	v := m.Recv(60 * time.Second)
	r, _ := v["result"].(map[string]any)
	sc, _ := r["structuredContent"].(map[string]any)
	if v["id"] != 900.0 || sc["exited"] != true || sc["exit_code"] != 7.0 {
		t.Fatalf("wait_for exit across a server kill: %v", v)
	}
}

// TestMCPReadScreenAfterRestart: read_screen of an ended session at once
// after the server was killed and started again reads its screen.
func TestMCPReadScreenAfterRestart(t *testing.T) {
	t.Parallel()
	e, m := startMCPEnv(t)
	// Enough output that the new server takes a moment to rebuild the
	// screen from the log.
	created := m.Tool("create_session", map[string]any{"command": "seq 1 200000; echo the-end"})
	id, _ := created["id"].(string)
	if r := m.Tool("wait_for", map[string]any{"session": id, "exit": true, "timeout_ms": 60000}); r["exited"] != true {
		t.Fatalf("wait_for exit: %v", r)
	}
	e.KillServer()
	e.StartServer()
	_, text, isErr := m.Try("read_screen", map[string]any{"session": id})
	if isErr || !strings.Contains(text, "200000\nthe-end") {
		t.Fatalf("read_screen right after a restart: %q (error %v)", text, isErr)
	}
}

// TestMCPPromptAtEnd: a "# " prompt at the end of a real shell's screen
// is matched, though the screen's text leaves out trailing blanks.
func TestMCPPromptAtEnd(t *testing.T) {
	t.Parallel()
	_, m := startMCPEnv(t)
	id := boxShell(t, m)
	if r := m.Tool("wait_for", map[string]any{"session": id, "text": "box# ", "timeout_ms": 5000}); r["matched"] != true || r["line_text"] != "box#" {
		t.Fatalf("the prompt \"box# \" on the screen: %v", r)
	}
}

// TestMCPTailProgress: tail_lines reads the end of 2 MB of progress
// redraws as the lines the screen shows.
func TestMCPTailProgress(t *testing.T) {
	t.Parallel()
	_, m := startMCPEnv(t)
	id := boxShell(t, m)
	sent := m.Tool("send_input", map[string]any{"session": id, "enter": true,
		"text": `i=0; while [ $i -lt 100000 ]; do printf '\r%6d of 100000 done' $i; i=$((i+1)); done; printf '\nall done\n'`})
	if r := m.Tool("wait_for", map[string]any{"session": id, "regex": "(?m)^all done\nbox# ", "offset": num(sent["offset"]), "timeout_ms": 120000}); r["matched"] != true {
		t.Fatalf("the loop did not end: %v", r)
	}
	tail := m.Tool("read_output", map[string]any{"session": id, "tail_lines": 3})
	if tail["text"] != " 99999 of 100000 done\nall done\nbox# " || tail["truncated"] != true || num(tail["next_offset"]) != num(tail["end_offset"]) {
		t.Fatalf("tail_lines 3: %v", tail)
	}
}

// startMCPEnv starts a server and `termkeep mcp` on it, past the handshake.
func startMCPEnv(t *testing.T) (*e2e.Env, *e2e.MCP) {
	e := e2e.NewEnv(t)
	e.StartServer()
	m := e2e.StartMCP(t, e)
	m.Initialize()
	return e, m
}

// boxShell starts sh with the prompt "box# " and returns its id. The
// prompt is typed quoted so that the command line does not show it.
func boxShell(t *testing.T, m *e2e.MCP) string {
	created := m.Tool("create_session", map[string]any{"command": []string{"sh"}})
	id, _ := created["id"].(string)
	sent := m.Tool("send_input", map[string]any{"session": id, "text": `PS1="bo""x# "`, "enter": true})
	if r := m.Tool("wait_for", map[string]any{"session": id, "text": "box# ", "offset": num(sent["offset"]), "timeout_ms": 15000}); r["matched"] != true {
		t.Fatalf("no prompt in the output: %v", r)
	}
	return id
}

// TestMCPProtocolEdges: the real `termkeep mcp` answers a request with no
// method and one over 16 MiB with their ids, refuses an empty command,
// sends the model to list_sessions, and marks the tools that run commands
// as destructive and open world.
func TestMCPProtocolEdges(t *testing.T) {
	t.Parallel()
	_, m := startMCPEnv(t)
	m.Send(`{"jsonrpc":"2.0","id":7}`)
	if v := m.Recv(30 * time.Second); v["id"] != 7.0 || v["error"].(map[string]any)["code"] != -32600.0 {
		t.Fatalf("no method: %v", v)
	}
	m.Send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"send_input","arguments":{"session":"x","text":"` + strings.Repeat("y", 17<<20) + `"}}}`)
	if v := m.Recv(60 * time.Second); v["id"] != 8.0 || v["error"] == nil {
		t.Fatalf("over 16 MiB: %v", v)
	}
	if _, text, isErr := m.Try("create_session", map[string]any{"command": []string{}}); !isErr || !strings.Contains(text, "empty") {
		t.Fatalf("command []: %q", text)
	}
	if _, text, isErr := m.Try("read_screen", map[string]any{"session": "nope"}); !isErr || !strings.Contains(text, "list_sessions") {
		t.Fatalf("an unknown session: %q", text)
	}
	v := m.Call("tools/list", map[string]any{})
	for _, tl := range v["result"].(map[string]any)["tools"].([]any) {
		tool := tl.(map[string]any)
		a := tool["annotations"].(map[string]any)
		if name := tool["name"]; (name == "send_input" || name == "create_session") && (a["destructiveHint"] != true || a["openWorldHint"] != true) {
			t.Errorf("%s: %v", name, a)
		}
	}
	if list := m.Tool("list_sessions", nil); len(list["sessions"].([]any)) != 0 {
		t.Fatalf("a session was started: %v", list)
	}
}
