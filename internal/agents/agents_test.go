package agents

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const id = "0b6f3c2e-8d4a-4f1e-9c3b-5a7d2e1f0a9b"

func found(name string) (string, error) { return "/opt/bin/" + name, nil }

// TestPlan: each preset's start command and restore command, pinned to an
// id where the agent takes one, and left unpinned where the caller's own
// arguments already choose a conversation.
func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		agent   string
		extra   []string
		command string // joined with |
		restore string
	}{
		{agent: "claude", command: "/opt/bin/claude|--session-id|" + id, restore: "claude --resume " + id},
		{agent: "claude", extra: []string{"--model", "opus 4", "it's"},
			command: "/opt/bin/claude|--session-id|" + id + "|--model|opus 4|it's",
			restore: `claude --resume ` + id + ` --model 'opus 4' 'it'\''s'`},
		// The caller chose a conversation: theirs wins, nothing is pinned.
		{agent: "claude", extra: []string{"--resume", "abc"}, command: "/opt/bin/claude|--resume|abc", restore: "claude --continue --resume abc"},
		{agent: "claude", extra: []string{"--resume=abc"}, command: "/opt/bin/claude|--resume=abc", restore: "claude --continue --resume=abc"},
		{agent: "claude", extra: []string{"-c"}, command: "/opt/bin/claude|-c", restore: "claude --continue -c"},
		{agent: "claude", extra: []string{"--session-id", "x"}, command: "/opt/bin/claude|--session-id|x", restore: "claude --continue --session-id x"},
		// Which argument is a flag is the agent's to parse: any word that
		// could choose a conversation leaves the session unpinned.
		{agent: "claude", extra: []string{"fix", "--resume"}, command: "/opt/bin/claude|fix|--resume", restore: "claude --continue fix --resume"},
		{agent: "gemini", command: "/opt/bin/gemini|--session-id|" + id, restore: "gemini --resume " + id},
		{agent: "gemini", extra: []string{"-r", "latest"}, command: "/opt/bin/gemini|-r|latest", restore: "gemini --resume latest -r latest"},
		// codex takes no id up front: until the server learns it, a restore
		// starts codex afresh (the command again), never the latest.
		{agent: "codex", command: "/opt/bin/codex", restore: ""},
		{agent: "codex", extra: []string{"--model", "o3"}, command: "/opt/bin/codex|--model|o3", restore: ""},
		{agent: "codex", extra: []string{"resume", "abc"}, command: "/opt/bin/codex|resume|abc", restore: ""},
		{agent: "aider", command: "/opt/bin/aider", restore: "aider --restore-chat-history"},
	} {
		p, err := Lookup(tc.agent)
		if err != nil {
			t.Fatal(err)
		}
		l, err := p.plan(tc.extra, found, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(l.Command, "|"); got != tc.command {
			t.Errorf("%s %q: command %q, want %q", tc.agent, tc.extra, got, tc.command)
		}
		if l.Restore != tc.restore {
			t.Errorf("%s %q: restore %q, want %q", tc.agent, tc.extra, l.Restore, tc.restore)
		}
		if want := strings.Contains(tc.command, "--session-id|"+id); (l.Conversation == id) != want || (l.Conversation != "" && l.Conversation != id) {
			t.Errorf("%s %q: conversation %q, pinned %v", tc.agent, tc.extra, l.Conversation, want)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	p, _ := Lookup("claude")
	missing := func(string) (string, error) { return "", errors.New("not found") }
	_, err := p.Plan(nil, missing)
	if err == nil || !strings.Contains(err.Error(), `"claude"`) || !strings.Contains(err.Error(), "npm install") {
		t.Errorf("missing binary: %v", err)
	}
	if _, err := Lookup("emacs"); err == nil || !strings.Contains(err.Error(), "claude, codex, gemini, aider") {
		t.Errorf("unknown agent: %v", err)
	}
	for _, p := range Presets {
		pinning := (p.StartFlag == "") == (p.ResumeFlag == "") || p.Rollouts != "" && p.StartFlag == "" && p.ResumeFlag != ""
		if p.Name == "" || p.Binary == "" || (p.Resume == "") != (p.Rollouts != "") || p.Install == "" || !pinning {
			t.Errorf("preset %+v is incomplete", p)
		}
	}
}

func TestCheckConversation(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{id, true},
		{"", false},
		{"../../etc/passwd", false},
		{"0B6F3C2E-8D4A-4F1E-9C3B-5A7D2E1F0A9B", false},
		{"*", false},
		{"abc def", false},
		{"x; rm -rf ~", false},
		{strings.Repeat("a", 65), false},
	} {
		if err := CheckConversation(tc.id); (err == nil) != tc.ok {
			t.Errorf("CheckConversation(%q) = %v", tc.id, err)
		}
	}
}

// TestPlanIDs: each plan gets its own id, in the form claude requires.
func TestPlanIDs(t *testing.T) {
	p, _ := Lookup("claude")
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		l, err := p.Plan(nil, found)
		if err != nil {
			t.Fatal(err)
		}
		if !uuid.MatchString(l.Conversation) || seen[l.Conversation] || CheckConversation(l.Conversation) != nil {
			t.Fatalf("conversation id %q (seen before: %v)", l.Conversation, seen[l.Conversation])
		}
		seen[l.Conversation] = true
	}
}

// TestFreshStart: a restore resumes a pinned conversation the agent has
// recorded, starts afresh (saying so) when it has none, and resumes when
// nobody can tell.
func TestFreshStart(t *testing.T) {
	home := t.TempDir()
	conf := t.TempDir()
	odd := filepath.Join(t.TempDir(), "[x]*") // glob characters in the home
	write := func(dir, name string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".claude", "projects", "-work-app"), id+".jsonl")
	write(filepath.Join(conf, "projects", "-srv"), id+".jsonl")
	write(filepath.Join(odd, ".claude", "projects", "-p"), id+".jsonl")
	write(filepath.Join(home, ".codex", "sessions", "2026", "11", "26"), "rollout-2026-11-26T10-00-00-"+id+".jsonl")
	other := "11111111-2222-4333-8444-555555555555"
	claude, _ := Lookup("claude")
	gemini, _ := Lookup("gemini")
	codex, _ := Lookup("codex")
	broken := func(string) ([]string, error) { return nil, errors.New("bad pattern") }

	for _, tc := range []struct {
		name  string
		p     Preset
		id    string
		env   []string
		glob  func(string) ([]string, error)
		fresh bool
	}{
		{"recorded under HOME", claude, id, []string{"HOME=" + home}, nil, false},
		{"never had a conversation", claude, other, []string{"HOME=" + home}, nil, true},
		{"CLAUDE_CONFIG_DIR wins over HOME", claude, id, []string{"HOME=/nonexistent", "CLAUDE_CONFIG_DIR=" + conf}, nil, false},
		{"CLAUDE_CONFIG_DIR without it", claude, id, []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + t.TempDir()}, nil, true},
		{"last value counts", claude, id, []string{"HOME=/nonexistent", "HOME=" + home}, nil, false},
		{"glob characters in the home", claude, id, []string{"HOME=" + odd}, nil, false},
		{"no home: unknowable, resume", claude, other, nil, nil, false},
		{"relative home: unknowable, resume", claude, other, []string{"HOME=rel"}, nil, false},
		{"glob fails: unknowable, resume", claude, other, []string{"HOME=" + home}, broken, false},
		{"a hostile id is never looked up", claude, "../*", []string{"HOME=" + home}, nil, false},
		{"an empty id", claude, "", []string{"HOME=" + home}, nil, false},
		{"gemini: not knowable, resume", gemini, other, []string{"HOME=" + home}, nil, false},
		{"codex: its rollout is there", codex, id, []string{"HOME=" + home}, nil, false},
		{"codex: its rollout is gone", codex, other, []string{"HOME=" + home}, nil, true},
		{"codex: CODEX_HOME wins over HOME", codex, id, []string{"HOME=" + home, "CODEX_HOME=" + conf}, nil, true},
	} {
		note := tc.p.FreshStart(tc.id, tc.env, tc.glob)
		if (note != "") != tc.fresh {
			t.Errorf("%s: note %q, want a fresh start: %v", tc.name, note, tc.fresh)
		}
		if note != "" && (!strings.Contains(note, tc.id) || !strings.Contains(note, "new")) {
			t.Errorf("%s: note %q", tc.name, note)
		}
	}
}
