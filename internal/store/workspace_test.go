package store

import (
	"context"
	"errors"
	"testing"
)

func TestWorkspaces(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := context.Background()
	if _, err := s.Workspace(ctx, "w"); !errors.Is(err, ErrWorkspaceNotFound) {
		t.Fatalf("missing workspace: %v, want ErrWorkspaceNotFound", err)
	}
	if err := s.CreateWorkspace(ctx, Workspace{Name: "w", Dir: "/src/w"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateWorkspace(ctx, Workspace{Name: "w", Dir: "/elsewhere"}); !errors.Is(err, ErrWorkspaceExists) {
		t.Fatalf("second create: %v, want ErrWorkspaceExists", err)
	}
	if err := s.CreateWorkspace(ctx, Workspace{Name: "a", Dir: "/src/a", AutoRestore: true}); err != nil {
		t.Fatal(err)
	}
	list, err := s.Workspaces(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "a" || !list[0].AutoRestore || list[1].Dir != "/src/w" {
		t.Fatalf("Workspaces = %+v, %v", list, err)
	}
	if err := s.SetWorkspacePaused(ctx, "w", true); err != nil {
		t.Fatal(err)
	}
	if w, _ := s.Workspace(ctx, "w"); !w.Paused {
		t.Fatalf("workspace not paused: %+v", w)
	}
	if err := s.SetWorkspacePaused(ctx, "nope", true); !errors.Is(err, ErrWorkspaceNotFound) {
		t.Fatalf("pause unknown: %v", err)
	}

	mustCreate(t, s, Session{ID: "s1", Workspace: "w", ShellIntegration: true, RestoreCommand: "claude --continue", AutoRestore: true})
	mustCreate(t, s, Session{ID: "s2", Workspace: "a"})
	got, err := s.SessionsInWorkspace(ctx, "w")
	if err != nil || len(got) != 1 || got[0].ID != "s1" {
		t.Fatalf("SessionsInWorkspace = %+v, %v", got, err)
	}
	if !got[0].ShellIntegration || got[0].RestoreCommand != "claude --continue" || !got[0].AutoRestore {
		t.Fatalf("restore fields not kept: %+v", got[0])
	}

	// Pause: running to paused, pid cleared; then Restart brings it back.
	if err := s.SetPids(ctx, "s1", 100, 99); err != nil {
		t.Fatal(err)
	}
	if err := s.Pause(ctx, "s1", "workspace w paused"); err != nil {
		t.Fatal(err)
	}
	p := mustGet(t, s, "s1")
	if p.State != StatePaused || p.Pid != 0 || p.Reason != "workspace w paused" {
		t.Fatalf("after Pause: %+v", p)
	}
	if err := s.Pause(ctx, "s1", "again"); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("pausing a paused session: %v, want ErrNotRunning", err)
	}
	if err := s.Restart(ctx, "s1", 200, 199); err != nil {
		t.Fatal(err)
	}
	if r := mustGet(t, s, "s1"); r.State != StateRunning || r.Pid != 200 || r.Reason != "" {
		t.Fatalf("after Restart: %+v", r)
	}

	if err := s.DeleteWorkspace(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteWorkspace(ctx, "w"); !errors.Is(err, ErrWorkspaceNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}
