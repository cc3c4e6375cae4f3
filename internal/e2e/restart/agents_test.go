package restart

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
)

// TestAgentsResumeTheirOwn: two claude sessions in one directory, each
// pinned to its own conversation; after every process is killed (as a
// reboot does), a restore resumes each its own, and a third that never had
// a conversation starts afresh with a note instead of failing with "No
// conversation found".
func TestAgentsResumeTheirOwn(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	log := filepath.Join(t.TempDir(), "claude-args")
	env := []string{
		"PATH=" + e2e.StandInClaude(t, log) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + t.TempDir(), "CLAUDE_CONFIG_DIR=",
	}
	e.ServerEnv = env
	e.StartServer()
	work := t.TempDir()

	// The API takes only a known agent, and a conversation id of the form
	// termkeep makes.
	for _, req := range []api.CreateRequest{
		{Command: []string{"true"}, Cwd: work, Agent: "vim"},
		{Command: []string{"true"}, Cwd: work, Agent: "claude", AgentConversation: "../../x"},
		{Command: []string{"true"}, Cwd: work, AgentConversation: "0b6f3c2e-8d4a-4f1e-9c3b-5a7d2e1f0a9b"},
	} {
		if _, err := e.C.Create(context.Background(), req); err == nil {
			t.Errorf("create with agent %q, conversation %q: no error", req.Agent, req.AgentConversation)
		}
	}

	conv := map[string]string{} // session id => conversation id
	var ids []string
	for _, name := range []string{"one", "two", "silent"} {
		out, errs, code := e.TkEnv(env, work, "new", "--agent", "claude", "--name", name)
		if code != 0 {
			t.Fatalf("new --agent claude: exit %d: %s", code, errs)
		}
		id := strings.TrimSpace(out)
		s := e.Session(id)
		if s.AgentConversation == "" || s.RestoreCommand != "claude --resume "+s.AgentConversation {
			t.Fatalf("%s: conversation %q, restore command %q", name, s.AgentConversation, s.RestoreCommand)
		}
		conv[id] = s.AgentConversation
		ids = append(ids, id)
		if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "claude-standin new "+s.AgentConversation+" ready", "--timeout", "20s"); code != 0 {
			t.Fatalf("%s did not start: %s", name, errs)
		}
		if name != "silent" {
			e.MustTk("send", id, "hello from "+name)
			if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "heard: hello from "+name, "--timeout", "20s"); code != 0 {
				t.Fatalf("%s did not hear: %s", name, errs)
			}
		}
	}
	if conv[ids[0]] == conv[ids[1]] {
		t.Fatalf("two sessions share conversation %s", conv[ids[0]])
	}

	killEverything(e)
	e.StartServer()
	for _, id := range ids {
		e2e.WaitFor(t, 10*time.Second, "the session to be interrupted", func() bool { return e.Session(id).State == "interrupted" })
	}
	if out, errs, code := e.TkEnv(env, work, "restore", "--all"); code != 0 {
		t.Fatalf("restore --all: exit %d: %s %s", code, out, errs)
	}
	for i, id := range ids[:2] {
		if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "claude-standin resume "+conv[id]+" ready", "--timeout", "20s"); code != 0 {
			t.Fatalf("session %d did not resume its conversation %s: %s\n%s", i+1, conv[id], errs, e.MustTk("capture", id))
		}
	}
	silent := ids[2]
	if _, errs, code := e.Tk("wait", silent, "--from", "start", "--output", "claude-standin new "+conv[silent]+" ready", "--timeout", "20s"); code != 0 {
		t.Fatalf("the session with no conversation did not start afresh: %s\n%s", errs, e.MustTk("capture", silent))
	}
	screen := e.MustTk("capture", silent, "--scrollback", "50")
	// The note is wider than the screen: join the rows it wraps onto.
	if !strings.Contains(strings.ReplaceAll(screen, "\n", ""), "claude has no conversation "+conv[silent]+" to resume; starting a new one") {
		t.Fatalf("no note of the fresh start:\n%q", screen)
	}
	if s := e.Session(silent); s.State != "running" {
		t.Fatalf("the fresh start ended: %+v", s)
	}

	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	starts := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := map[string]int{}
	for _, id := range ids[:2] {
		want["--session-id "+conv[id]]++
		want["--resume "+conv[id]]++
	}
	want["--session-id "+conv[silent]] += 2
	for _, s := range starts {
		want[s]--
	}
	for args, n := range want {
		if n != 0 {
			t.Errorf("claude started with %q %d times too few", args, n)
		}
	}
	if t.Failed() {
		t.Logf("claude's starts:\n%s", b)
	}
}
