package store

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The decision: a registry behind the generation recorded beside it was
// rolled back; one ahead or level was not (the copy is written after the
// commit, so it may lag); a file that cannot be read or is damaged tells
// nothing and is written again; a rollback found before is kept until it
// is cleared.
func TestJudgeGeneration(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	earlier := now.Add(-time.Hour)
	standing := &Rollback{From: 40, To: 0, FoundAt: earlier}
	for _, tc := range []struct {
		name      string
		registry  uint64
		file      string
		err       error
		rollback  *Rollback
		isNew     bool
		problem   string // a substring; "" = none
		wantWrite bool
	}{
		{name: "no file yet", registry: 0, err: fs.ErrNotExist, wantWrite: true},
		{name: "no file, registry from before generations", registry: 7, err: &fs.PathError{Op: "open", Path: "x", Err: syscall.ENOENT}, wantWrite: true},
		{name: "level", registry: 12, file: `{"generation":12}`},
		{name: "file behind: a crash between commit and copy", registry: 13, file: `{"generation":12}`, wantWrite: true},
		{name: "rolled back to empty", registry: 0, file: `{"generation":12}`,
			rollback: &Rollback{From: 12, To: 0, FoundAt: now}, isNew: true, wantWrite: true},
		{name: "rolled back by one", registry: 11, file: "{\"generation\":12}\n",
			rollback: &Rollback{From: 12, To: 11, FoundAt: now}, isNew: true, wantWrite: true},
		{name: "largest generation", registry: 3, file: `{"generation":18446744073709551615}`,
			rollback: &Rollback{From: math.MaxUint64, To: 3, FoundAt: now}, isNew: true, wantWrite: true},
		{name: "standing rollback, level", registry: 5, file: `{"generation":5,"rollback":{"from":40,"to":0,"found_at":"` + earlier.Format(time.RFC3339Nano) + `"}}`,
			rollback: standing},
		{name: "standing rollback, registry moved on", registry: 9, file: `{"generation":5,"rollback":{"from":40,"to":0,"found_at":"` + earlier.Format(time.RFC3339Nano) + `"}}`,
			rollback: standing, wantWrite: true},
		{name: "a second rollback replaces the first", registry: 2, file: `{"generation":5,"rollback":{"from":40,"to":0,"found_at":"` + earlier.Format(time.RFC3339Nano) + `"}}`,
			rollback: &Rollback{From: 5, To: 2, FoundAt: now}, isNew: true, wantWrite: true},
		{name: "a rollback note that lost nothing is dropped", registry: 5, file: `{"generation":5,"rollback":{"from":3,"to":3}}`, wantWrite: true},
		{name: "empty file (a crash before the rename's data)", registry: 4, file: "", problem: "damaged", wantWrite: true},
		{name: "garbage", registry: 4, file: "\x00\xffgarbage", problem: "damaged", wantWrite: true},
		{name: "negative generation", registry: 4, file: `{"generation":-1}`, problem: "damaged", wantWrite: true},
		{name: "generation past 64 bits", registry: 4, file: `{"generation":18446744073709551616}`, problem: "damaged", wantWrite: true},
		{name: "text generation", registry: 4, file: `{"generation":"12"}`, problem: "damaged", wantWrite: true},
		{name: "huge file", registry: 4, file: `{"generation":1,"x":"` + strings.Repeat("a", 5000) + `"}`, problem: "not a generation", wantWrite: true},
		{name: "unreadable", registry: 4, err: errors.New("permission denied"), problem: "permission denied", wantWrite: true},
		{name: "unknown fields are ignored", registry: 4, file: `{"generation":4,"by":"a later termkeep"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, write := judgeGeneration(tc.registry, []byte(tc.file), tc.err, now)
			if c.Registry != tc.registry {
				t.Errorf("Registry %d, want %d", c.Registry, tc.registry)
			}
			switch {
			case (c.Rollback == nil) != (tc.rollback == nil):
				t.Errorf("rollback %+v, want %+v", c.Rollback, tc.rollback)
			case c.Rollback != nil && (c.Rollback.From != tc.rollback.From || c.Rollback.To != tc.rollback.To || !c.Rollback.FoundAt.Equal(tc.rollback.FoundAt)):
				t.Errorf("rollback %+v, want %+v", *c.Rollback, *tc.rollback)
			}
			if c.New != tc.isNew {
				t.Errorf("New %v, want %v", c.New, tc.isNew)
			}
			if (tc.problem == "") != (c.Problem == "") || !strings.Contains(c.Problem, tc.problem) {
				t.Errorf("Problem %q, want one saying %q", c.Problem, tc.problem)
			}
			if write != tc.wantWrite {
				t.Errorf("write %v, want %v", write, tc.wantWrite)
			}
		})
	}
}

// A real registry put back to an older copy of itself, as a lost WAL does:
// Open finds the rollback and says how many changes it lost (OpenToCheck
// too, leaving it new), the next Open
// still reports it (no longer new), changes made meanwhile do not hide it,
// and ClearRollback ends it.
func TestGenerationFindsRollback(t *testing.T) {
	ctx := context.Background()
	s, c, path := openTest(t)
	if g := s.Generation(); g.Rollback != nil || g.Problem != "" {
		t.Fatalf("a new registry: %+v", g)
	}
	if err := s.CreateSession(ctx, Session{ID: "a", Command: []string{"sh"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	old, err := os.ReadFile(path) // Close checkpoints: the file is all of it
	if err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateWorkspace(ctx, Workspace{Name: "w", Dir: "/"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Rename(ctx, "a", "web"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.End(ctx, "a", StateExited, nil, ""); err != nil {
		t.Fatal(err)
	}
	if g, err := s.generation(ctx); err != nil || g != 4 {
		t.Fatalf("generation %d (%v) after 4 changes, want 4", g, err)
	}
	s.Close()
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}

	// A look (doctor without a fix) finds it and leaves it new.
	s, err = OpenToCheck(ctx, path, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	if g := s.Generation(); g.Rollback == nil || !g.New {
		t.Fatalf("OpenToCheck after the rollback: %+v, want a new rollback", g)
	}
	s.Close()
	s, err = Open(ctx, path, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	g := s.Generation()
	if g.Rollback == nil || !g.New || g.Rollback.From != 4 || g.Rollback.To != 1 || g.Rollback.Lost() != 3 {
		t.Fatalf("after the rollback: %+v (%+v), want a new rollback from 4 to 1", g, g.Rollback)
	}
	if err := s.CreateSession(ctx, Session{ID: "b", Command: []string{"sh"}}); err != nil {
		t.Fatal(err)
	}
	// While it stands, the workspaces' copy keeps what the registry lost.
	if err := s.CreateWorkspace(ctx, Workspace{Name: "x", Dir: "/x"}); err != nil {
		t.Fatal(err)
	}
	if ws, err := ReadWorkspaceCopy(path); err != nil || len(ws) != 1 || ws[0].Name != "w" {
		t.Fatalf("the workspaces' copy during a rollback: %+v (%v), want w only", ws, err)
	}
	s.Close()
	s, err = Open(ctx, path, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	if g := s.Generation(); g.Rollback == nil || g.New || g.Rollback.From != 4 || g.Rollback.To != 1 {
		t.Fatalf("the next Open: %+v, want the same rollback, not new", g)
	}
	if err := s.ClearRollback(ctx); err != nil {
		t.Fatal(err)
	}
	if ws, err := ReadWorkspaceCopy(path); err != nil || len(ws) != 1 || ws[0].Name != "x" {
		t.Fatalf("the workspaces' copy after ClearRollback: %+v (%v), want the registry's, x", ws, err)
	}
	s.Close()
	s, err = Open(ctx, path, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if g := s.Generation(); g.Rollback != nil || g.Problem != "" || g.Registry != 3 {
		t.Fatalf("after ClearRollback: %+v, want no rollback at generation 3", g)
	}
}

// Whatever the file beside the registry holds, the decision is one of its
// kinds: a rollback only from a generation ahead of the registry, lost
// changes counted without wrapping, and a file that is not level with the
// registry (or is damaged) written again.
func FuzzJudgeGeneration(f *testing.F) {
	for _, s := range []string{`{"generation":12}`, `{"generation":5,"rollback":{"from":40,"to":0,"found_at":"2026-11-26T09:00:00Z"}}`,
		"", "null", `{"generation":-1}`, `{"rollback":{"from":1,"to":9}}`, `[1]`} {
		f.Add(uint64(5), []byte(s))
	}
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, registry uint64, file []byte) {
		c, write := judgeGeneration(registry, file, nil, now)
		if c.Registry != registry {
			t.Fatalf("Registry %d, want %d", c.Registry, registry)
		}
		if r := c.Rollback; r != nil {
			if r.From <= r.To || r.Lost() == 0 || r.Lost() > r.From {
				t.Fatalf("rollback %+v loses nothing or wraps", *r)
			}
			if c.New && (r.To != registry || !write) {
				t.Fatalf("a new rollback %+v at registry %d, write %v", *r, registry, write)
			}
		}
		if c.Problem != "" && (c.Rollback != nil || !write) {
			t.Fatalf("an unreadable file gave %+v, write %v", c, write)
		}
		if !write && c.Problem == "" {
			// Level: reading the same file again decides the same.
			if again, w := judgeGeneration(registry, file, nil, now.Add(time.Hour)); w || again.New {
				t.Fatalf("a level file judged again: %+v, write %v", again, w)
			}
		}
	})
}

// A generation table edited by hand (its row gone, a negative count) does
// not stop the registry from opening: it reads as 0, which a recorded
// generation ahead of it reports as a rollback.
func TestGenerationEditedByHand(t *testing.T) {
	ctx := context.Background()
	s, c, path := openTest(t)
	if err := s.CreateSession(ctx, Session{ID: "a", Command: []string{"sh"}}); err != nil {
		t.Fatal(err)
	}
	for _, edit := range []string{`UPDATE generation SET n = -5`, `DELETE FROM generation`} {
		if _, err := s.db.ExecContext(ctx, edit); err != nil {
			t.Fatal(err)
		}
		s.Close()
		var err error
		s, err = Open(ctx, path, c.Now)
		if err != nil {
			t.Fatalf("Open after %q: %v", edit, err)
		}
		if g := s.Generation(); g.Registry != 0 || g.Rollback == nil || g.Rollback.From != 1 {
			t.Fatalf("after %q: %+v, want generation 0 and the rollback from 1", edit, g)
		}
	}
	s.Close()
}
