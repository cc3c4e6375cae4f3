package agents

import (
	"errors"
	"strings"
	"testing"
)

func TestPlan(t *testing.T) {
	found := func(name string) (string, error) { return "/opt/bin/" + name, nil }
	missing := func(string) (string, error) { return "", errors.New("not found") }

	p, err := Lookup("claude")
	if err != nil {
		t.Fatal(err)
	}
	l, err := p.Plan([]string{"--model", "opus 4", "it's"}, found)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(l.Command, "|"); got != "/opt/bin/claude|--model|opus 4|it's" {
		t.Errorf("command %q", got)
	}
	if want := `claude --continue --model 'opus 4' 'it'\''s'`; l.Restore != want {
		t.Errorf("restore %q, want %q", l.Restore, want)
	}

	_, err = p.Plan(nil, missing)
	if err == nil || !strings.Contains(err.Error(), `"claude"`) || !strings.Contains(err.Error(), "npm install") {
		t.Errorf("missing binary: %v", err)
	}

	if _, err := Lookup("emacs"); err == nil || !strings.Contains(err.Error(), "claude, codex, gemini, aider") {
		t.Errorf("unknown agent: %v", err)
	}
	for _, p := range Presets {
		if p.Name == "" || p.Binary == "" || p.Resume == "" || p.Install == "" {
			t.Errorf("preset %+v is incomplete", p)
		}
	}
}
