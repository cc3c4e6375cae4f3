package restart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
)

// TestAgentsResumeTheirOwn: two claude sessions in one directory, each
// pinned to its own conversation; after every process is killed (as a
// reboot does), a restore resumes each its own, and a third that never had
// a conversation starts afresh with a note instead of failing with "No
// conversation found". The same for codex, whose ids are learned from the
// rollout file each session holds open: two sessions in one directory
// resume their own (one of them moved to a newer conversation with /new),
// and one whose file was never seen starts afresh with a note.
func TestAgentsResumeTheirOwn(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	log := filepath.Join(t.TempDir(), "claude-args")
	codexLog := filepath.Join(t.TempDir(), "codex-args")
	sep := string(os.PathListSeparator)
	env := []string{
		"PATH=" + e2e.StandInClaude(t, log) + sep + e2e.StandInCodex(t, codexLog) + sep + os.Getenv("PATH"),
		"HOME=" + t.TempDir(), "CLAUDE_CONFIG_DIR=", "CODEX_HOME=", "STANDIN_NO_ROLLOUT=",
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
	codexIDs, codexConv := startCodex(t, e, env, work)

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

	checkCodexRestored(t, e, codexLog, codexIDs, codexConv)

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

// startCodex starts three codex sessions in work: "c1" and "c2", whose
// conversations the server learns (c2's twice: it moves to a newer one
// with /new), and "c-silent", whose conversation is never seen. It returns
// their ids and, for the first two, the conversation each is on. The
// sessions are made at once and watched through the API: each CLI run
// costs a second here.
func startCodex(t *testing.T, e *e2e.Env, env []string, work string) (ids []string, conv map[string]string) {
	t.Helper()
	conv = map[string]string{}
	home := envOf(env, "HOME")
	learned := func(id string) string {
		var s api.Session
		e2e.WaitFor(t, 10*time.Second, "the codex conversation to be learned", func() bool {
			s = e.Session(id)
			return s.AgentConversation != "" && s.AgentConversation != conv[id]
		})
		if s.RestoreCommand != "codex resume "+s.AgentConversation {
			t.Fatalf("conversation %q, restore command %q", s.AgentConversation, s.RestoreCommand)
		}
		// The id is the one codex made: its rollout file is named after it.
		if m, _ := filepath.Glob(filepath.Join(home, ".codex", "sessions", "*", "*", "*", "rollout-*-"+s.AgentConversation+".jsonl")); len(m) != 1 {
			t.Fatalf("the learned conversation %s has no rollout file", s.AgentConversation)
		}
		return s.AgentConversation
	}
	names := []string{"c1", "c2", "c-silent"}
	ids = make([]string, len(names))
	errs := make([]string, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		args := []string{"new", "--agent", "codex", "--name", name}
		if name == "c-silent" {
			args = append(args, "--env", "STANDIN_NO_ROLLOUT=1")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, stderr, code := e.TkEnv(env, work, args...)
			if code != 0 {
				errs[i] = fmt.Sprintf("new --agent codex --name %s: exit %d: %s", name, code, stderr)
			}
			ids[i] = strings.TrimSpace(out)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != "" {
			t.Fatal(err)
		}
	}
	for _, id := range ids[:2] {
		conv[id] = learned(id)
	}
	if conv[ids[0]] == conv[ids[1]] {
		t.Fatalf("two codex sessions share conversation %s", conv[ids[0]])
	}
	// A newer conversation in c2 replaces the one recorded.
	if err := e.C.Input(context.Background(), ids[1], []byte("/new\n")); err != nil {
		t.Fatal(err)
	}
	conv[ids[1]] = learned(ids[1])
	return ids, conv
}

// checkCodexRestored: after the restore, each codex session resumed its
// own conversation, and the one never seen started afresh with a note.
func checkCodexRestored(t *testing.T, e *e2e.Env, log string, ids []string, conv map[string]string) {
	t.Helper()
	screenHas := func(id, what, text string) {
		t.Helper()
		var screen string
		e2e.WaitFor(t, 20*time.Second, what, func() bool {
			screen, _ = e.C.Screen(context.Background(), id, false, 50)
			// A line wider than the screen wraps: join the rows.
			return strings.Contains(strings.ReplaceAll(screen, "\n", ""), text)
		})
	}
	for _, id := range ids[:2] {
		screenHas(id, "codex to resume its own conversation", "codex-standin resume "+conv[id]+" ready")
	}
	screenHas(ids[2], "a note of the fresh start", "codex's conversation was never seen open while it ran, so there is none to resume; starting a new one")
	want := map[string]int{"": 4} // each started afresh once, the silent one twice
	for _, id := range ids[:2] {
		want["resume "+conv[id]]++
	}
	var b []byte
	e2e.WaitFor(t, 20*time.Second, "every codex start", func() bool {
		b, _ = os.ReadFile(log)
		return strings.Count(string(b), "\n") >= 6
	})
	for _, s := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		want[s]--
	}
	for args, n := range want {
		if n != 0 {
			t.Errorf("codex started with %q %d times too few", args, n)
		}
	}
	if t.Failed() {
		t.Logf("codex's starts:\n%s", b)
	}
}

// envOf is the value of name in env.
func envOf(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}
