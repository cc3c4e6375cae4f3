package web

import (
	"strings"
	"testing"

	"termkeep/internal/e2e"
)

// TestMCPScope: `termkeep mcp --workspace proj` sees, types into and ends
// only proj's sessions, creates its own there, refuses a denied command,
// and hands its children only the allowed environment; --read-only lists
// no tool that writes and refuses one called anyway.
func TestMCPScope(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	// A bad limit is a usage error (2) before anything is served.
	for _, flags := range [][]string{{"--deny-command", ""}, {"--allow-command", " "}, {"--workspace", "../x"}, {"--env-allow", "A=B"}} {
		if _, errs, code := tkEnv(e, nil, t.TempDir(), append([]string{"mcp"}, flags...)...); code != 2 || !strings.Contains(errs, flags[0]) {
			t.Errorf("mcp %q: exit %d: %s", flags, code, errs)
		}
	}
	projDir := t.TempDir()
	e.MustTk("workspace", "add", "proj", projDir)
	// The owner's own session, made by hand in another workspace.
	mine := strings.TrimSpace(e.MustTk("new", "--name", "mine", "--workspace", "home", "--", "sh", "-c", "echo owner; sleep 300"))

	m := e2e.StartMCPArgs(t, e, []string{"--workspace", "proj", "--deny-command", "rm", "--env-allow", "KEEP_ME"},
		"FAKE_API_KEY=sk-fake-123", "KEEP_ME=kept")
	m.Initialize()

	if list := m.Tool("list_sessions", nil); len(list["sessions"].([]any)) != 0 {
		t.Fatalf("list_sessions shows another workspace's session: %v", list)
	}
	// By name and by id, reading, typing and killing: the same answer as
	// for a session that does not exist.
	for _, ref := range []string{"mine", mine} {
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{"read_screen", map[string]any{"session": ref}},
			{"read_output", map[string]any{"session": ref}},
			{"send_input", map[string]any{"session": ref, "text": "x"}},
			{"wait_for", map[string]any{"session": ref, "exit": true, "timeout_ms": 5000}}, // refused at once; the time is for the lookup on a busy machine
			{"kill_session", map[string]any{"session": ref}},
		} {
			_, text, isErr := m.Try(tc.tool, tc.args)
			want := `no session "` + ref + `" in workspace proj`
			if !isErr || !strings.Contains(text, want) {
				t.Errorf("%s %s: isError %v, %q; want %q", tc.tool, ref, isErr, text, want)
			}
		}
	}
	_, ghost, _ := m.Try("read_screen", map[string]any{"session": "ghost"})
	if _, text, _ := m.Try("read_screen", map[string]any{"session": "mine"}); strings.ReplaceAll(text, "mine", "ghost") != ghost {
		t.Errorf("another workspace's session is told apart from none: %q and %q", text, ghost)
	}
	if s := e.Session(mine); s.State != "running" {
		t.Fatalf("the owner's session is %s", s.State)
	}
	if _, text, isErr := m.Try("create_session", map[string]any{"command": "sleep 1", "workspace": "home"}); !isErr || !strings.Contains(text, "workspace proj") {
		t.Fatalf("create_session in another workspace: %v %q", isErr, text)
	}
	// Plain, chained, by path, and hidden in a -c script or behind a
	// wrapper, as a string and as an array.
	for _, cmd := range []any{"rm -rf " + projDir, "true && rm -rf " + projDir, []string{"/bin/rm", "-rf", projDir},
		"sh -c 'rm -rf " + projDir + "'", []string{"sh", "-c", "rm -rf " + projDir}, "env rm -rf " + projDir, "echo $(rm -rf " + projDir + ")"} {
		if _, text, isErr := m.Try("create_session", map[string]any{"command": cmd}); !isErr || !strings.Contains(text, "--deny-command") {
			t.Fatalf("create_session %q: %v %q", cmd, isErr, text)
		}
	}

	// Its own session: in proj, in proj's directory, with only the
	// allowed environment.
	r := m.Tool("create_session", map[string]any{"command": `echo "key=[$FAKE_API_KEY] keep=[$KEEP_ME] home=[$HOME]"; sleep 300`})
	id, _ := r["id"].(string)
	if s := e.Session(id); s.Workspace != "proj" || s.Cwd != projDir {
		t.Fatalf("the MCP's session is in workspace %q, %s", s.Workspace, s.Cwd)
	}
	if w := m.Tool("wait_for", map[string]any{"session": id, "regex": `key=\[[^]]*\] keep=\[[^]]*\]`, "timeout_ms": 15000}); w["text"] != "key=[] keep=[kept]" {
		t.Fatalf("the child's environment: %v", w)
	}
	if w := m.Tool("wait_for", map[string]any{"session": id, "regex": `home=\[/[^]]*\]`, "timeout_ms": 5000}); w["matched"] != true {
		t.Fatalf("HOME did not reach the child: %v", w)
	}
	if list := m.Tool("list_sessions", nil)["sessions"].([]any); len(list) != 1 || list[0].(map[string]any)["id"] != id {
		t.Fatalf("list_sessions: %v", list)
	}
	m.Tool("kill_session", map[string]any{"session": id})

	// A name another workspace has is free here, as a name no session has:
	// the scope's sessions are named as if no other workspace existed.
	own := m.Tool("create_session", map[string]any{"command": "echo its-own; sleep 300", "name": "mine"})
	ownID, _ := own["id"].(string)
	if ownID == "" || ownID == mine || own["name"] != "mine" {
		t.Fatalf("create_session named like another workspace's session: %v", own)
	}
	if w := m.Tool("wait_for", map[string]any{"session": "mine", "text": "its-own", "timeout_ms": 15000}); w["matched"] != true {
		t.Fatalf("mine, in the scope, is not its own session: %v", w)
	}
	m.Tool("kill_session", map[string]any{"session": "mine"})
	if s := e.Session(mine); s.State != "running" {
		t.Fatalf("killing its own mine ended the owner's: %s", s.State)
	}
	// Outside any scope the name is ambiguous: the answer says so, and how
	// to name one.
	if _, errs, code := e.Tk("kill", "mine"); code == 0 || !strings.Contains(errs, "by its id") {
		t.Fatalf("kill mine with two: exit %d: %s", code, errs)
	}
	e.MustTk("rm", ownID)

	// Read-only: no tool that writes is listed, and one called is refused.
	ro := e2e.StartMCPArgs(t, e, []string{"--read-only"})
	ro.Initialize()
	v := ro.Call("tools/list", map[string]any{})
	for _, tl := range v["result"].(map[string]any)["tools"].([]any) {
		tool := tl.(map[string]any)
		if ann, _ := tool["annotations"].(map[string]any); ann["readOnlyHint"] != true {
			t.Errorf("--read-only lists %s, which writes", tool["name"])
		}
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"send_input", map[string]any{"session": "mine", "text": "x"}},
		{"create_session", map[string]any{}},
		{"kill_session", map[string]any{"session": "mine"}},
	} {
		if _, text, isErr := ro.Try(tc.tool, tc.args); !isErr || !strings.Contains(text, "--read-only") {
			t.Errorf("--read-only %s: isError %v, %q", tc.tool, isErr, text)
		}
	}
	if _, text, isErr := ro.Try("read_screen", map[string]any{"session": "mine"}); isErr || !strings.Contains(text, "owner") {
		t.Fatalf("--read-only read_screen: %v %q", isErr, text)
	}
	if s := e.Session(mine); s.State != "running" {
		t.Fatalf("the owner's session is %s", s.State)
	}
}
