package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// MCP drives `termkeep mcp` over its stdin and stdout, as an MCP client
// (Claude Code, an IDE) does. Its methods fail the test on a broken
// exchange.
type MCP struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	id    int
}

// StartMCP starts `termkeep mcp` for the env's state directory, with
// extraEnv added to its environment. It is ended, and must exit cleanly,
// when the test ends.
func StartMCP(t *testing.T, e *Env, extraEnv ...string) *MCP {
	t.Helper()
	return StartMCPArgs(t, e, nil, extraEnv...)
}

// StartMCPArgs is StartMCP with flags after `mcp` (--workspace W, say).
func StartMCPArgs(t *testing.T, e *Env, flags []string, extraEnv ...string) *MCP {
	t.Helper()
	cmd := exec.Command(TkBin, append([]string{"--state-dir", e.Dir, "--no-autostart", "mcp"}, flags...)...)
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.Dir = t.TempDir()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := &MCP{t: t, cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			m.lines <- sc.Text()
		}
		close(m.lines)
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("termkeep mcp: %v; stderr:\n%s", err, stderr.String())
			}
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			t.Errorf("termkeep mcp did not end when its input closed")
		}
	})
	return m
}

// Send writes one line to its input.
func (m *MCP) Send(line string) {
	m.t.Helper()
	if _, err := io.WriteString(m.in, line+"\n"); err != nil {
		m.t.Fatalf("write to termkeep mcp: %v", err)
	}
}

// Recv reads the next message; every line on stdout must be one.
func (m *MCP) Recv(timeout time.Duration) map[string]any {
	m.t.Helper()
	select {
	case line, ok := <-m.lines:
		if !ok {
			m.t.Fatal("termkeep mcp closed its output")
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil || v["jsonrpc"] != "2.0" {
			m.t.Fatalf("termkeep mcp wrote a line that is not a JSON-RPC message: %q", line)
		}
		return v
	case <-time.After(timeout):
		m.t.Fatalf("no answer from termkeep mcp within %s", timeout)
	}
	return nil
}

// Call sends a request and returns the whole answer.
func (m *MCP) Call(method string, params any) map[string]any {
	m.t.Helper()
	m.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.id, "method": method, "params": params})
	m.Send(string(b))
	v := m.Recv(60 * time.Second)
	if id, _ := v["id"].(float64); int(id) != m.id {
		m.t.Fatalf("answer to request %d: %v", m.id, v)
	}
	return v
}

// Tool calls a tool that must succeed and returns its structured content.
func (m *MCP) Tool(name string, args map[string]any) map[string]any {
	m.t.Helper()
	sc, text, isErr := m.Try(name, args)
	if isErr {
		m.t.Fatalf("%s %v: %s", name, args, text)
	}
	return sc
}

// Try calls a tool: its structured content, its first text, whether it
// is a tool error.
func (m *MCP) Try(name string, args map[string]any) (map[string]any, string, bool) {
	m.t.Helper()
	v := m.Call("tools/call", map[string]any{"name": name, "arguments": args})
	r, ok := v["result"].(map[string]any)
	if !ok {
		m.t.Fatalf("tools/call %s: %v", name, v)
	}
	isErr, _ := r["isError"].(bool)
	text := ""
	if content, _ := r["content"].([]any); len(content) > 0 {
		text, _ = content[0].(map[string]any)["text"].(string)
	}
	sc, _ := r["structuredContent"].(map[string]any)
	return sc, text, isErr
}

// Initialize makes the MCP handshake and checks the server's answer.
func (m *MCP) Initialize() {
	m.t.Helper()
	v := m.Call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "e2e", "version": "1"}})
	r, _ := v["result"].(map[string]any)
	if r == nil || r["protocolVersion"] != "2025-06-18" {
		m.t.Fatalf("initialize: %v", v)
	}
	if info, _ := r["serverInfo"].(map[string]any); info["name"] != "termkeep" {
		m.t.Fatalf("serverInfo: %v", r["serverInfo"])
	}
	if caps, _ := r["capabilities"].(map[string]any); caps["tools"] == nil {
		m.t.Fatalf("capabilities: %v", r["capabilities"])
	}
	m.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}
