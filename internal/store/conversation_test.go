package store

import (
	"context"
	"errors"
	"testing"
)

// TestSetAgentConversation: a learned conversation is recorded with its
// restore command, and replaced only by a caller that names the one it
// replaces; it is never cleared, and never given to a plain session.
func TestSetAgentConversation(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := context.Background()
	const u1, u2 = "019a6f3c-2e8d-7a4f-9e1c-3b5a7d2e1f0a", "019a6f3d-0000-7a4f-9e1c-3b5a7d2e1f0b"
	mustCreate(t, s, Session{ID: "a", Agent: "codex", Command: []string{"/bin/codex"}})
	mustCreate(t, s, Session{ID: "plain", Command: []string{"/bin/sh"}, RestoreCommand: "make"})

	if err := s.SetAgentConversation(ctx, "a", "", u1, "codex resume "+u1); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "a"); got.AgentConversation != u1 || got.RestoreCommand != "codex resume "+u1 {
		t.Fatalf("conversation %q, restore %q", got.AgentConversation, got.RestoreCommand)
	}
	for _, tc := range []struct {
		name, id, was, conv string
		want                error
	}{
		{"replacing one the caller did not know", "a", "", u2, ErrConversationChanged},
		{"replacing another", "a", u2, u1, ErrConversationChanged},
		{"clearing it", "a", u1, "", nil},
		{"a plain session", "plain", "", u1, nil},
		{"no such session", "nope", "", u1, ErrNotFound},
	} {
		err := s.SetAgentConversation(ctx, tc.id, tc.was, tc.conv, "codex resume x")
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want an error (%v)", tc.name, err, tc.want)
		}
	}
	if got := mustGet(t, s, "a"); got.AgentConversation != u1 || got.RestoreCommand != "codex resume "+u1 {
		t.Fatalf("after refused changes: conversation %q, restore %q", got.AgentConversation, got.RestoreCommand)
	}
	if got := mustGet(t, s, "plain"); got.AgentConversation != "" || got.RestoreCommand != "make" {
		t.Fatalf("plain session: conversation %q, restore %q", got.AgentConversation, got.RestoreCommand)
	}
	// A newer conversation in the same session, named over the old one.
	if err := s.SetAgentConversation(ctx, "a", u1, u2, "codex resume "+u2); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "a"); got.AgentConversation != u2 || got.RestoreCommand != "codex resume "+u2 {
		t.Fatalf("conversation %q, restore %q", got.AgentConversation, got.RestoreCommand)
	}
}
