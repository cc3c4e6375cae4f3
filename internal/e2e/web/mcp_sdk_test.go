package web

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"termkeep/internal/e2e"
)

// sdkClient is `termkeep mcp` driven by the official Go SDK's client, as
// an agent's MCP client drives it.
type sdkClient struct {
	t  *testing.T
	cs *sdk.ClientSession

	mu       sync.Mutex
	progress []*sdk.ProgressNotificationParams
	updated  []string // URIs of resources/updated notifications
}

// startSDKClient starts `termkeep mcp flags...` for e's state directory
// in dir and connects to it.
func startSDKClient(t *testing.T, e *e2e.Env, dir string, env []string, flags ...string) *sdkClient {
	t.Helper()
	c := &sdkClient{t: t}
	cl := sdk.NewClient(&sdk.Implementation{Name: "e2e-sdk", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, r.Params)
			c.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
			c.mu.Lock()
			c.updated = append(c.updated, r.Params.URI)
			c.mu.Unlock()
		},
	})
	cmd := exec.Command(e2e.TkBin, append([]string{"--state-dir", e.Dir, "--no-autostart", "mcp"}, flags...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	// Its log, for a race report or a panic in it to fail the test.
	stderr, err := os.Create(filepath.Join(t.TempDir(), "mcp.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := cl.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to termkeep mcp: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		stderr.Close()
		b, _ := os.ReadFile(stderr.Name())
		for _, bad := range []string{"WARNING: DATA RACE", "panic:", "fatal error:"} {
			if i := strings.Index(string(b), bad); i >= 0 {
				t.Errorf("%s in termkeep mcp %v:\n%s", bad, flags, e2e.Tail(b[i:], 4000))
			}
		}
	})
	c.cs = cs
	return c
}

// try calls a tool: its structured content, its first text, whether it is
// a tool error.
func (c *sdkClient) try(name string, args map[string]any) (map[string]any, string, bool) {
	c.t.Helper()
	return c.tryCtx(context.Background(), name, args, nil)
}

func (c *sdkClient) tryCtx(ctx context.Context, name string, args map[string]any, token any) (map[string]any, string, bool) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute) // beyond the longest run_command below
	defer cancel()
	p := &sdk.CallToolParams{Name: name, Arguments: args}
	if token != nil {
		p.SetProgressToken(token)
	}
	r, err := c.cs.CallTool(ctx, p)
	if err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
	text := ""
	if len(r.Content) > 0 {
		if tc, ok := r.Content[0].(*sdk.TextContent); ok {
			text = tc.Text
		}
	}
	var sc map[string]any
	if r.StructuredContent != nil {
		b, _ := json.Marshal(r.StructuredContent)
		json.Unmarshal(b, &sc)
	}
	return sc, text, r.IsError
}

func (c *sdkClient) tool(name string, args map[string]any) map[string]any {
	c.t.Helper()
	sc, text, isErr := c.try(name, args)
	if isErr {
		c.t.Fatalf("%s %v: %s", name, args, text)
	}
	return sc
}

// activity is a session's activity as list_sessions shows it.
func (c *sdkClient) activity(id string) map[string]any {
	c.t.Helper()
	for _, s := range c.tool("list_sessions", nil)["sessions"].([]any) {
		if m := s.(map[string]any); m["id"] == id {
			a, _ := m["activity"].(map[string]any)
			return a
		}
	}
	c.t.Fatalf("list_sessions has no %s", id)
	return nil
}

// TestMCPSDKAcceptance drives `termkeep mcp` with the official Go SDK's
// client through what an agent does: run_command of a failing make, a
// full-screen program driven with arrow keys, a 10 MB flood read by its
// tail, grep, resize, a screen resource with updates, honest activity
// states, progress and cancellation, a wait that survives a SIGKILL of the
// server, --workspace and --read-only refusing what they must, and a
// restore of two pinned claude stand-ins in one directory.
func TestMCPSDKAcceptance(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	home := t.TempDir()
	log := filepath.Join(t.TempDir(), "claude-args")
	path := e2e.StandInClaude(t, log) + string(os.PathListSeparator) + os.Getenv("PATH")
	env := []string{"PATH=" + path, "HOME=" + home, "CLAUDE_CONFIG_DIR=", "HISTFILE=" + filepath.Join(home, "hist")}
	e.ServerEnv = env
	e.StartServer()
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "Makefile"), []byte("all:\n\t@echo compiling main.c\n\t@echo 'main.c:3: error: expected ;' >&2\n\t@false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.MustTk("workspace", "add", "proj", repo)
	c := startSDKClient(t, e, repo, env, "--env-allow", "HISTFILE")

	// A shell in the repository: at its prompt once it has drawn it.
	sh := c.tool("create_session", map[string]any{"command": []string{"bash"}, "workspace": "proj"})
	id := sh["id"].(string)
	var act map[string]any
	defer func() {
		if t.Failed() {
			t.Logf("the shell's last activity seen: %v", act)
		}
	}()
	e2e.WaitFor(t, 15*time.Second, "the shell's first prompt", func() bool { act = c.activity(id); return act["state"] == "at_prompt" })

	// run_command of make with a failing target: its status, its own
	// output (no echo, no prompt), and the directory after it.
	r := c.tool("run_command", map[string]any{"session": id, "command": "cd /"})
	if r["exit_code"] != 0.0 || r["cwd"] != "/" {
		t.Fatalf("run_command cd /: %v", r)
	}
	c.tool("run_command", map[string]any{"session": id, "command": "cd " + repo})
	r = c.tool("run_command", map[string]any{"session": id, "command": "make"})
	out, _ := r["output"].(string)
	// Only make's three lines: no echo of the typed line, no prompt.
	if r["exit_code"] != 2.0 || !strings.HasPrefix(out, "compiling main.c\nmain.c:3: error: expected ;\n") ||
		!strings.HasSuffix(out, "Error 1\n") || strings.Count(out, "\n") != 3 || r["truncated"] != false || r["cwd"] != repo {
		t.Fatalf("run_command make: %v", r)
	}
	if start, end := num(r["output_start"]), num(r["output_end"]); end <= start {
		t.Fatalf("run_command make: output range [%d, %d)", start, end)
	}

	// grep over the whole log finds make's error line with its offset.
	g := c.tool("grep", map[string]any{"session": id, "pattern": "error: expected"})
	hits, _ := g["hits"].([]any)
	if len(hits) == 0 || !strings.Contains(hits[len(hits)-1].(map[string]any)["line"].(string), "main.c:3: error") {
		t.Fatalf("grep: %v", g)
	}

	// A screen resource: read, subscribed, updated when the screen changes.
	uri := "termkeep://sessions/" + id + "/screen"
	ctx := context.Background()
	rr, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "Error 1") {
		t.Fatalf("read %s: %v %v", uri, rr, err)
	}
	if err := c.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}

	// A long command: running, with its line; progress while run_command
	// waits; a second run_command refused; cancellation ends the wait.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p := &sdk.CallToolParams{Name: "run_command", Arguments: map[string]any{"session": id, "command": "sleep 30"}}
		p.SetProgressToken("run-1")
		_, err := c.cs.CallTool(cctx, p)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled run_command: %v", err)
		}
	}()
	e2e.WaitFor(t, 10*time.Second, "sleep 30 to run", func() bool {
		act = c.activity(id)
		return act["state"] == "running" && act["command"] == "sleep 30"
	})
	if _, text, isErr := c.try("run_command", map[string]any{"session": id, "command": "echo x"}); !isErr || !strings.Contains(text, "sleep 30") {
		t.Fatalf("a second run_command while one runs: %v %q", isErr, text)
	}
	e2e.WaitFor(t, 5*time.Second, "a progress notification", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.progress) > 0 && c.progress[0].ProgressToken == "run-1"
	})
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling run_command did not end it")
	}
	e2e.WaitFor(t, 5*time.Second, "the screen resource's update", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.updated) > 0 && c.updated[0] == uri
	})
	c.tool("send_input", map[string]any{"session": id, "keys": []string{"C-c"}})
	e2e.WaitFor(t, 10*time.Second, "the prompt after Ctrl-C", func() bool { act = c.activity(id); return act["state"] == "at_prompt" })

	// A 10 MB flood, read by its tail: run_command keeps the tail.
	// A -race server on a busy machine takes its time over 10 MB: the
	// call's own deadline is not what is tested here.
	r = c.tool("run_command", map[string]any{"session": id, "command": "head -c 7500000 /dev/zero | base64 -w 100; echo flood-done", "timeout_ms": 180000})
	if out, _ := r["output"].(string); r["exit_code"] != 0.0 || r["truncated"] != true || !strings.HasSuffix(out, "AAAA\nflood-done\n") || len(out) > 70000 {
		t.Fatalf("run_command of a flood: exit_code %v, timed_out %v, truncated %v, %d bytes of output ending %q", r["exit_code"], r["timed_out"], r["truncated"], len(out), out[max(0, len(out)-40):])
	}
	if end := num(r["output_end"]) - num(r["output_start"]); end < 10_000_000 {
		t.Fatalf("the flood's output range is %d bytes", end)
	}
	tail := c.tool("read_output", map[string]any{"session": id, "tail_lines": 2})
	if text, _ := tail["text"].(string); !strings.HasPrefix(text, "flood-done\n") || tail["truncated"] != true {
		t.Fatalf("read_output tail_lines 2 after the flood: %v", tail)
	}

	// A full-screen program driven with arrow keys, then resized: waiting
	// once it is quiet, with its screen's last line.
	lines := make([]string, 200)
	for i := range lines {
		lines[i] = "row " + strconv.Itoa(i+1)
	}
	os.WriteFile(filepath.Join(repo, "rows.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	c.tool("send_input", map[string]any{"session": id, "text": "less rows.txt", "enter": true})
	if w := c.tool("wait_for", map[string]any{"session": id, "regex": `(?m)\Arow 1$`, "timeout_ms": 10000}); w["matched"] != true {
		t.Fatalf("less did not start: %v", w)
	}
	c.tool("send_input", map[string]any{"session": id, "keys": []string{"Down", "Down", "Down"}})
	if w := c.tool("wait_for", map[string]any{"session": id, "regex": `\Arow 4\n`, "timeout_ms": 10000}); w["matched"] != true {
		t.Fatalf("Down did not scroll less: %v", w)
	}
	if rz := c.tool("resize", map[string]any{"session": id, "cols": 100, "rows": 40}); rz["cols"] != 100.0 || rz["rows"] != 40.0 {
		t.Fatalf("resize: %v", rz)
	}
	if w := c.tool("wait_for", map[string]any{"session": id, "regex": `(?m)^row 42$`, "timeout_ms": 10000}); w["matched"] != true {
		t.Fatalf("less did not redraw at 40 rows: %v", w)
	}
	e2e.WaitFor(t, 10*time.Second, "less to read the terminal", func() bool {
		act = c.activity(id)
		return act["state"] == "reading_terminal" && act["kernel"] == true && act["program"] == "less"
	})

	// --read-only and --workspace refuse what they must.
	ro := startSDKClient(t, e, repo, env, "--read-only")
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"run_command", map[string]any{"session": id, "command": "true"}},
		{"resize", map[string]any{"session": id, "cols": 80, "rows": 24}},
		{"restore", map[string]any{"session": id}},
	} {
		if _, text, isErr := ro.try(tc.tool, tc.args); !isErr || !strings.Contains(text, "--read-only") {
			t.Errorf("--read-only %s: %v %q", tc.tool, isErr, text)
		}
	}
	other := strings.TrimSpace(e.MustTk("new", "--name", "mine", "--workspace", "home", "--", "sh", "-c", "echo owner; sleep 300"))
	e2e.WaitFor(t, 10*time.Second, "the owner's session to print", func() bool {
		g := ro.tool("grep", map[string]any{"session": "mine", "pattern": "owner"})
		return len(g["hits"].([]any)) == 1
	})
	ws := startSDKClient(t, e, repo, env, "--workspace", "proj", "--deny-command", "rm")
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"run_command", map[string]any{"session": "mine", "command": "true"}, `no session "mine" in workspace proj`},
		{"grep", map[string]any{"session": other, "pattern": "owner"}, `in workspace proj`},
		{"resize", map[string]any{"session": "mine", "cols": 80, "rows": 24}, `in workspace proj`},
		{"run_command", map[string]any{"session": id, "command": "rm -rf " + repo}, "--deny-command"},
	} {
		if _, text, isErr := ws.try(tc.tool, tc.args); !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("--workspace %s %v: %v %q", tc.tool, tc.args, isErr, text)
		}
	}
	if _, err := ws.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "termkeep://sessions/mine/screen"}); err == nil {
		t.Errorf("--workspace reads another workspace's screen")
	}

	// Two pinned claude stand-ins in one directory, ended and restored:
	// each resumes its own conversation.
	conv := map[string]string{}
	for _, word := range []string{"alpha", "beta"} {
		s := c.tool("create_session", map[string]any{"agent": "claude", "workspace": "proj"})
		cid := s["id"].(string)
		conv[cid] = strings.TrimPrefix(s["restore_command"].(string), "claude --resume ")
		c.tool("wait_for", map[string]any{"session": cid, "text": "ready", "timeout_ms": 10000})
		c.tool("send_input", map[string]any{"session": cid, "text": "hello " + word, "enter": true})
		if w := c.tool("wait_for", map[string]any{"session": cid, "text": "heard: hello " + word, "timeout_ms": 10000}); w["matched"] != true {
			t.Fatalf("the stand-in did not hear: %v", w)
		}
		c.tool("kill_session", map[string]any{"session": cid})
	}
	for cid, cv := range conv {
		if rs := c.tool("restore", map[string]any{"session": cid}); rs["state"] != "running" {
			t.Fatalf("restore %s: %v", cid, rs)
		}
		if w := c.tool("wait_for", map[string]any{"session": cid, "text": "resume " + cv + " ready", "timeout_ms": 10000}); w["matched"] != true {
			t.Fatalf("%s did not resume its own conversation %s: %v", cid, cv, w)
		}
	}

	// The server SIGKILLed during wait_for: the waits go on against the
	// new server and end with the match.
	var wg sync.WaitGroup
	for cid := range conv {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc, text, isErr := c.try("wait_for", map[string]any{"session": cid, "text": "heard: again", "timeout_ms": 30000})
			if isErr || sc["matched"] != true {
				t.Errorf("wait_for across a server kill in %s: %q %v", cid, text, sc)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // the waits are under way
	e.KillServer()
	e.StartServer()
	for cid := range conv {
		c.tool("send_input", map[string]any{"session": cid, "text": "again", "enter": true})
	}
	wg.Wait()
}
