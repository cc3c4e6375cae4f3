package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/cmdpolicy"
)

// TestRunCommandRefusals: a bad line, a denied command, a shell that runs
// a command and an ended session are refused before anything is typed.
func TestRunCommandRefusals(t *testing.T) {
	fake := newFake()
	fake.sessions[0].Shell = &api.Shell{State: "running", Command: "make test"}
	deny, err := cmdpolicy.New(nil, []string{"rm"})
	if err != nil {
		t.Fatal(err)
	}
	c := startServerWith(t, Options{Version: "test", Connect: fake.connect, Scope: Scope{Commands: deny}})
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"session": "web"}, "not empty"},
		{map[string]any{"session": "web", "command": " \n "}, "not empty"},
		{map[string]any{"session": "web", "command": "make\nrm -rf /"}, "--deny-command"},
		{map[string]any{"session": "web", "command": "ls", "env": map[string]any{"1X": "a"}}, `"1X" is not a variable name`},
		{map[string]any{"session": "web", "command": "ls", "env": map[string]any{"A-B": "a"}}, `"A-B" is not a variable name`},
		{map[string]any{"session": "web", "command": "ls", "env": map[string]any{"A": 1}}, `must be`},
		{map[string]any{"session": "web", "command": "ls", "cwd": "/nonexistent/dir"}, `cwd "/nonexistent/dir" is not a directory`},
		{map[string]any{"session": "web", "command": "true && rm -rf /"}, "--deny-command"},
		{map[string]any{"session": "web", "command": "ls", "timeout_ms": 0}, "timeout_ms"},
		{map[string]any{"session": "web", "command": "ls", "max_bytes": 1 << 21}, "max_bytes"},
		{map[string]any{"session": "web", "command": "ls"}, `running "make test", not at its prompt`},
		{map[string]any{"session": "s2", "command": "ls"}, "session s2 is exited (status 0); restore starts it again"},
		{map[string]any{"session": "nope", "command": "ls"}, `no session "nope"`},
	} {
		if _, text, isErr := c.tool("run_command", tc.args); !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("run_command %v: %v %q; want %q", tc.args, isErr, text, tc.want)
		}
	}
	if len(fake.inputs) != 0 {
		t.Fatalf("a refused run_command typed %q", fake.inputs)
	}
}

// TestRunCommandOnce: a second run_command in a session while the first
// waits is refused, never typed; cancelling the first ends its wait and
// frees the session.
func TestRunCommandOnce(t *testing.T) {
	fake := newFake() // web: no marks seen, so the run ends at its marker
	c := startServer(t, fake)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 900, "method": "tools/call",
		"params": map[string]any{"name": "run_command", "arguments": map[string]any{"session": "web", "command": "sleep 30"}}})
	c.send(string(b))
	deadline := time.Now().Add(5 * time.Second)
	for typed := false; !typed; {
		fake.mu.Lock()
		typed = len(fake.inputs) == 1
		fake.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("the first run_command typed nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, text, isErr := c.tool("run_command", map[string]any{"session": "web", "command": "echo x"}); !isErr || !strings.Contains(text, `already running "sleep 30"`) {
		t.Fatalf("a second run_command: %v %q", isErr, text)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":900}}`)
	// Freed: the next one is typed, and times out as a normal answer.
	for id := 1000; ; id++ {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
			"params": map[string]any{"name": "run_command", "arguments": map[string]any{"session": "web", "command": "echo x", "timeout_ms": 100}}})
		c.send(string(b))
		m := c.recv()
		if m["id"] == 900.0 { // the SDK answers a cancelled call too
			if r, _ := m["result"].(map[string]any); r["isError"] != true {
				t.Fatalf("the cancelled call's answer: %v", m)
			}
			m = c.recv()
		}
		if m["id"] != float64(id) {
			t.Fatalf("an answer to request %v, sent %d: %v", m["id"], id, m)
		}
		r, _ := m["result"].(map[string]any)
		if sc, _ := r["structuredContent"].(map[string]any); sc["timed_out"] == true {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the cancel: %v", m)
		}
		time.Sleep(10 * time.Millisecond)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.inputs) != 2 || !strings.Contains(fake.inputs[0], "sleep 30") || !strings.Contains(fake.inputs[1], "echo x") {
		t.Fatalf("typed %q", fake.inputs)
	}
}

// TestRunCommandMarkers: in a shell showing no marks, the line goes
// between markers, and the output between them is the command's, read
// once across a restart of the server.
func TestRunCommandMarkers(t *testing.T) {
	fake := newFake()
	c := startServer(t, fake)
	done := make(chan map[string]any, 1)
	go func() {
		r, text, isErr := c.tool("run_command", map[string]any{"session": "web", "command": "make"})
		if isErr {
			t.Errorf("run_command: %s", text)
		}
		done <- r
	}()
	var typed string
	for deadline := time.Now().Add(5 * time.Second); typed == ""; time.Sleep(10 * time.Millisecond) {
		fake.mu.Lock()
		if len(fake.inputs) > 0 {
			typed = fake.inputs[0]
		}
		fake.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("nothing typed")
		}
	}
	i := strings.Index(typed, "__tk_start_%s__")
	tok := strings.TrimSuffix(strings.Fields(typed[i:])[1], ";")
	fake.print("s1", typed[3:]+"\r\n__tk_start_"+tok+"__\r\nbuilding\r\n")
	// The server goes away and comes back: the run reads on where it was.
	time.Sleep(200 * time.Millisecond)
	fake.restart(300 * time.Millisecond)
	fake.print("s1", "make: *** Error 1\r\n\r\n__tk_end_"+tok+"_2__\r\n$ ")
	var r map[string]any
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("run_command did not end at its marker; typed %q", typed)
	}
	if r["exit_code"] != 2.0 || r["output"] != "building\nmake: *** Error 1\n" || r["shell_integration"] != false || r["truncated"] != false {
		t.Fatalf("run_command: %v", r)
	}
}
