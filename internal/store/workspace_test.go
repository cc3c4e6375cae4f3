package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"strings"
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

// The copy beside the registry follows every change to a workspace, and a
// damaged copy is an error that names it.
func TestWorkspaceCopy(t *testing.T) {
	ctx := context.Background()
	s, _, path := openTest(t)
	if _, err := ReadWorkspaceCopy(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("copy of a new registry: %v, want none", err)
	}
	for _, w := range []Workspace{{Name: "a", Dir: "/a"}, {Name: "b", Dir: "/b"}, {Name: "c", Dir: "/c"}} {
		if err := s.CreateWorkspace(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetWorkspaceAutoRestore(ctx, "a", true); err != nil {
		t.Fatal(err)
	}
	if err := s.SetWorkspacePaused(ctx, "b", true); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteWorkspace(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	got, err := ReadWorkspaceCopy(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range got {
		names = append(names, fmt.Sprintf("%s %s auto=%v paused=%v", w.Name, w.Dir, w.AutoRestore, w.Paused))
	}
	if want := []string{"a /a auto=true paused=false", "b /b auto=false paused=true"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("copy %q, want %q", names, want)
	}
	if err := os.WriteFile(path+WorkspacesSuffix, []byte("[{\"name\":"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadWorkspaceCopy(path); err == nil || !strings.Contains(err.Error(), WorkspacesSuffix) {
		t.Fatalf("a damaged copy: %v, want an error naming it", err)
	}
}
