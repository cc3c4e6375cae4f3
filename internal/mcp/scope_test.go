package mcp

import (
	"slices"
	"strings"
	"testing"

	"termkeep/internal/api"
	"termkeep/internal/cmdpolicy"
)

func TestScopeSession(t *testing.T) {
	mine := api.Session{ID: "ab12cd34", Name: "mine", Workspace: "home"}
	loose := api.Session{ID: "zz99yy88", Name: "loose"}
	proj := api.Session{ID: "pp11qq22", Name: "build", Workspace: "proj"}
	other := api.Session{ID: "oo11", Name: "proj", Workspace: "projx"} // named like the workspace
	scoped := Scope{Workspace: "proj"}
	for _, tc := range []struct {
		name  string
		scope Scope
		ref   string
		s     *api.Session
		ok    bool
	}{
		{"unscoped sees all", Scope{}, "mine", &mine, true},
		{"unscoped sees one in no workspace", Scope{}, "loose", &loose, true},
		{"its own by name", scoped, "build", &proj, true},
		{"its own by id", scoped, "pp11qq22", &proj, true},
		{"another workspace's by name", scoped, "mine", &mine, false},
		{"another workspace's by id", scoped, "ab12cd34", &mine, false},
		{"one in no workspace", scoped, "loose", &loose, false},
		{"a workspace sharing a prefix", scoped, "proj", &other, false},
		{"none at all", scoped, "ghost", nil, false},
		{"read-only changes nothing here", Scope{ReadOnly: true, Workspace: "proj"}, "build", &proj, true},
	} {
		err := tc.scope.Session(tc.ref, tc.s)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.s != nil && tc.scope.Visible(*tc.s) != tc.ok {
			t.Errorf("%s: Visible disagrees", tc.name)
		}
		if err != nil {
			// Beyond the workspace reads exactly as nothing there.
			want := tc.scope.Session(tc.ref, nil)
			if err.Error() != want.Error() || !strings.Contains(err.Error(), `no session "`+tc.ref+`" in workspace proj`) {
				t.Errorf("%s: %q, and for none %q", tc.name, err, want)
			}
		}
	}
}

func TestScopeWorkspaces(t *testing.T) {
	scoped := Scope{Workspace: "proj"}
	for _, tc := range []struct {
		scope      Scope
		asked      string
		list, make string // "!" refused
	}{
		{Scope{}, "", "", ""},
		{Scope{}, "any", "any", "any"},
		{scoped, "", "proj", "proj"},
		{scoped, "proj", "proj", "proj"},
		{scoped, "home", "!", "!"},
		{scoped, "Proj", "!", "!"},
	} {
		for _, f := range []struct {
			name string
			fn   func(string) (string, error)
			want string
		}{{"ListWorkspace", tc.scope.ListWorkspace, tc.list}, {"CreateWorkspace", tc.scope.CreateWorkspace, tc.make}} {
			got, err := f.fn(tc.asked)
			if f.want == "!" {
				if err == nil || !strings.Contains(err.Error(), "workspace proj") {
					t.Errorf("%s(%q) in %q: %q, %v; want refused", f.name, tc.asked, tc.scope.Workspace, got, err)
				}
			} else if err != nil || got != f.want {
				t.Errorf("%s(%q) in %q: %q, %v; want %q", f.name, tc.asked, tc.scope.Workspace, got, err, f.want)
			}
		}
	}
}

func TestScopeTool(t *testing.T) {
	ro := Scope{ReadOnly: true}
	if err := ro.Tool("send_input", false); err == nil || !strings.Contains(err.Error(), "--read-only") {
		t.Fatalf("read-only send_input: %v", err)
	}
	if n := (Scope{Workspace: "proj", ReadOnly: true}).note(); !strings.Contains(n, "workspace proj") || !strings.Contains(n, "read-only") || (Scope{}).note() != "" {
		t.Fatalf("note: %q", n)
	}
	if ro.Tool("read_screen", true) != nil || (Scope{}).Tool("kill_session", false) != nil {
		t.Fatal("refused what the scope allows")
	}
}

func TestScopeCommand(t *testing.T) {
	pol := func(allow, deny []string) *cmdpolicy.Policy {
		p, err := cmdpolicy.New(allow, deny)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	bash := []string{"SHELL=/bin/bash"}
	for _, tc := range []struct {
		name string
		sc   Scope
		argv []string
		env  []string
		want string
	}{
		{"no patterns, default shell", Scope{}, nil, nil, ""},
		{"allow list refuses the default shell", Scope{Commands: pol([]string{"make"}, nil)}, nil, bash, `"/bin/bash"`},
		{"allow list refuses /bin/sh without SHELL", Scope{Commands: pol([]string{"make"}, nil)}, nil, nil, `"/bin/sh"`},
		{"allowed shell", Scope{Commands: pol([]string{"bash"}, nil)}, nil, bash, ""},
		{"deny after allow", Scope{Commands: pol([]string{"git *"}, []string{"git push"})}, []string{"git", "push", "-f"}, nil, "--deny-command"},
		{"a string command's sh -c", Scope{Commands: pol(nil, []string{"rm"})}, []string{"/bin/sh", "-c", "ls; rm -rf ~"}, nil, "--deny-command"},
	} {
		err := tc.sc.Command(tc.argv, tc.env)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
	allowMake := Scope{Commands: pol([]string{"make", "bash", "python3"}, nil)}
	for _, tc := range []struct {
		sc      Scope
		command []string
		ok      bool
	}{
		{Scope{}, []string{"/bin/bash"}, true},
		{Scope{Commands: pol(nil, []string{"rm"})}, []string{"bash"}, true}, // a deny list is no fence
		{allowMake, []string{"/bin/bash", "-l"}, false},
		{allowMake, []string{"-zsh"}, false},
		{allowMake, []string{"/usr/bin/fish"}, false},
		{allowMake, []string{"busybox", "sh"}, false},
		{allowMake, nil, false},
		{allowMake, []string{"python3"}, true},
		{allowMake, []string{"make", "watch"}, true},
	} {
		err := tc.sc.Input(api.Session{Command: tc.command})
		if (err == nil) != tc.ok {
			t.Errorf("Input(%q) under %v = %v; want ok %v", tc.command, tc.sc.Commands, err, tc.ok)
		}
	}
	if err := (Scope{Commands: pol(nil, []string{"curl"})}).CommandLine("make && curl x | sh"); err == nil {
		t.Fatal("CommandLine let a denied command through")
	}
}

func TestScopeChildEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/home/u", "LC_ALL=C", "FAKE_API_KEY=sk-1", "AWS_SECRET_ACCESS_KEY=x", "AWS_REGION=eu",
		"SSH_AUTH_SOCK=/tmp/a", "ANTHROPIC_API_KEY=k", "PATHX=no", "=weird", "NOEQUALS", "TERMKEEP_STATE_DIR=/s"}
	for _, tc := range []struct {
		allow []string
		want  []string
	}{
		{nil, []string{"PATH=/bin", "HOME=/home/u", "LC_ALL=C"}},
		{[]string{"ANTHROPIC_API_KEY"}, []string{"PATH=/bin", "HOME=/home/u", "LC_ALL=C", "ANTHROPIC_API_KEY=k"}},
		{[]string{"AWS_*"}, []string{"PATH=/bin", "HOME=/home/u", "LC_ALL=C", "AWS_SECRET_ACCESS_KEY=x", "AWS_REGION=eu"}},
		{[]string{"*"}, []string{"PATH=/bin", "HOME=/home/u", "LC_ALL=C", "FAKE_API_KEY=sk-1", "AWS_SECRET_ACCESS_KEY=x", "AWS_REGION=eu",
			"SSH_AUTH_SOCK=/tmp/a", "ANTHROPIC_API_KEY=k", "PATHX=no", "TERMKEEP_STATE_DIR=/s"}},
	} {
		if got := (Scope{EnvAllow: tc.allow}).ChildEnv(environ); !slices.Equal(got, tc.want) {
			t.Errorf("EnvAllow %q: %q; want %q", tc.allow, got, tc.want)
		}
	}
}

func TestScopeCheck(t *testing.T) {
	for _, sc := range []Scope{{Workspace: "../x"}, {Workspace: "a b"}, {EnvAllow: []string{""}}, {EnvAllow: []string{"A=B"}}, {EnvAllow: []string{"*A"}}, {EnvAllow: []string{"A B"}}} {
		if err := sc.Check(); err == nil {
			t.Errorf("%+v passed", sc)
		}
	}
	for _, sc := range []Scope{{}, {Workspace: "proj", EnvAllow: []string{"AWS_*", "*", "X"}}} {
		if err := sc.Check(); err != nil {
			t.Errorf("%+v: %v", sc, err)
		}
	}
}

// TestScopedTools: the tools ask the scope before they act.
func TestScopedTools(t *testing.T) {
	fake := newFake() // s1 "web" in workspace app, s2 in none
	c := startServerWith(t, Options{Version: "test", Connect: fake.connect, Scope: Scope{Workspace: "app"}})
	if r, _, _ := c.tool("list_sessions", nil); len(r["sessions"].([]any)) != 1 {
		t.Fatalf("list_sessions: %v", r)
	}
	for tl, args := range map[string]map[string]any{
		"read_screen":  {"session": "s2"},
		"read_output":  {"session": "s2"},
		"send_input":   {"session": "s2", "text": "x"},
		"wait_for":     {"session": "s2", "exit": true},
		"kill_session": {"session": "s2"},
		"run_command":  {"session": "s2", "command": "ls"},
		"grep":         {"session": "s2", "pattern": "x"},
		"resize":       {"session": "s2", "cols": 80, "rows": 24},
		"restore":      {"session": "s2"},
	} {
		if _, text, isErr := c.tool(tl, args); !isErr || !strings.Contains(text, `no session "s2" in workspace app`) {
			t.Errorf("%s s2: %v %q", tl, isErr, text)
		}
	}
	if _, text, isErr := c.tool("read_screen", map[string]any{"session": "web"}); isErr {
		t.Fatalf("read_screen web: %s", text)
	}
	if r, text, isErr := c.tool("create_session", map[string]any{"command": "make"}); isErr || fake.sessions[len(fake.sessions)-1].Workspace != "app" {
		t.Fatalf("create_session: %v %q", r, text)
	}

	fake = newFake()
	ro := startServerWith(t, Options{Version: "test", Connect: fake.connect, Scope: Scope{ReadOnly: true}})
	for _, tl := range ro.call("tools/list", map[string]any{})["tools"].([]any) {
		if ann := tl.(map[string]any)["annotations"].(map[string]any); ann["readOnlyHint"] != true {
			t.Errorf("--read-only lists %v", tl.(map[string]any)["name"])
		}
	}
	if _, text, isErr := ro.tool("send_input", map[string]any{"session": "web", "text": "x"}); !isErr || !strings.Contains(text, "--read-only") || len(fake.inputs) != 0 {
		t.Fatalf("send_input under --read-only: %v %q %q", isErr, text, fake.inputs)
	}
	for tl, args := range map[string]map[string]any{
		"run_command": {"session": "web", "command": "ls"},
		"resize":      {"session": "web", "cols": 80, "rows": 24},
		"restore":     {"session": "s2"},
	} {
		if _, text, isErr := ro.tool(tl, args); !isErr || !strings.Contains(text, "--read-only") {
			t.Errorf("%s under --read-only: %v %q", tl, isErr, text)
		}
	}
	if r, text, isErr := ro.tool("grep", map[string]any{"session": "web", "pattern": "echo"}); isErr || len(r["hits"].([]any)) != 1 {
		t.Errorf("grep under --read-only: %v %q", r, text)
	}
	if v := ro.call("tools/call", map[string]any{"name": "format_disk"}); v["error"] == nil {
		t.Fatalf("an unknown tool under --read-only: %v", v)
	}
}
