package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Every lookup after a change of the registry answers as the registry:
// each row of the table changes one thing and then looks up every ref, so
// a cached row the change should have dropped shows as a wrong answer.
func TestSessionCacheFollowsWrites(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := context.Background()
	code := 3
	for _, tc := range []struct {
		what   string
		change func() error
		want   map[string]string // ref => id ("" = not found)
	}{
		{"create a session", func() error { return s.CreateSession(ctx, Session{ID: "aaaaaaaa", Name: "web"}) },
			map[string]string{"aaaaaaaa": "aaaaaaaa", "web": "aaaaaaaa", "bbbbbbbb": ""}},
		{"a name that is another session's id, before that session", func() error {
			return s.CreateSession(ctx, Session{ID: "cccccccc", Name: "bbbbbbbb"})
		}, map[string]string{"bbbbbbbb": "cccccccc", "web": "aaaaaaaa"}},
		{"the session whose id it is: the id wins", func() error { return s.CreateSession(ctx, Session{ID: "bbbbbbbb"}) },
			map[string]string{"bbbbbbbb": "bbbbbbbb", "cccccccc": "cccccccc"}},
		{"rename", func() error { return s.Rename(ctx, "aaaaaaaa", "api") },
			map[string]string{"web": "", "api": "aaaaaaaa"}},
		{"the old name taken by another", func() error { return s.Rename(ctx, "cccccccc", "web") },
			map[string]string{"web": "cccccccc", "bbbbbbbb": "bbbbbbbb", "api": "aaaaaaaa"}},
		{"a rename refused", func() error {
			if err := s.Rename(ctx, "bbbbbbbb", "web"); !errors.Is(err, ErrNameTaken) {
				return fmt.Errorf("rename to a taken name: %v", err)
			}
			return nil
		}, map[string]string{"web": "cccccccc"}},
		{"end", func() error { _, err := s.End(ctx, "aaaaaaaa", StateExited, &code, "done"); return err },
			map[string]string{"api": "aaaaaaaa"}},
		{"restart", func() error { return s.Restart(ctx, "aaaaaaaa", 10, 11) }, map[string]string{"api": "aaaaaaaa"}},
		{"pids", func() error { return s.SetPids(ctx, "aaaaaaaa", 12, 13) }, map[string]string{"aaaaaaaa": "aaaaaaaa"}},
		{"cwd", func() error { return s.SetCwd(ctx, "aaaaaaaa", "/srv") }, map[string]string{"api": "aaaaaaaa"}},
		{"size", func() error { return s.SetSize(ctx, "aaaaaaaa", 100, 30) }, map[string]string{"api": "aaaaaaaa"}},
		{"size policy", func() error { return s.SetSizePolicy(ctx, "aaaaaaaa", "smallest") }, map[string]string{"api": "aaaaaaaa"}},
		{"interrupted, then its cause", func() error {
			if _, err := s.End(ctx, "cccccccc", StateInterrupted, nil, "lost"); err != nil {
				return err
			}
			_, err := s.SetCause(ctx, "cccccccc", "killed", "its holder was killed")
			return err
		}, map[string]string{"web": "cccccccc"}},
		{"pause", func() error { return s.Pause(ctx, "aaaaaaaa", "workspace paused") }, map[string]string{"api": "aaaaaaaa"}},
		{"delete", func() error { return s.Delete(ctx, "cccccccc") },
			map[string]string{"web": "", "cccccccc": "", "bbbbbbbb": "bbbbbbbb"}},
	} {
		// Fill the cache first, so that the change has something to drop.
		for ref := range tc.want {
			s.Resolve(ctx, ref)
			s.Session(ctx, ref)
		}
		if err := tc.change(); err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		for ref, id := range tc.want {
			for range 2 { // a miss, then the cache
				got, err := s.Resolve(ctx, ref)
				switch {
				case id == "" && !errors.Is(err, ErrNotFound):
					t.Errorf("after %s: Resolve(%q) = %q, %v; want not found", tc.what, ref, got.ID, err)
				case id != "" && (err != nil || got.ID != id):
					t.Errorf("after %s: Resolve(%q) = %q, %v; want %q", tc.what, ref, got.ID, err, id)
				case id != "":
					assertSession(t, got, uncached(t, s, id))
				}
			}
		}
	}
}

// uncached reads session id from the registry itself.
func uncached(t *testing.T, s *Store, id string) Session {
	t.Helper()
	sess, err := scanSession(s.db.QueryRowContext(context.Background(), `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	if err != nil {
		t.Fatalf("read %s: %v", id, err)
	}
	return sess
}

// A session the caller changes is its own copy: the next lookup does not
// see the change.
func TestSessionCacheAnswersCopies(t *testing.T) {
	s, _, _ := openTest(t)
	code := 1
	mustCreate(t, s, Session{ID: "s1", Command: []string{"bash", "-l"}, State: StateExited, ExitCode: &code})
	for range 2 {
		got := mustGet(t, s, "s1")
		got.Command[0] = "changed"
		*got.ExitCode = 99
		*got.EndedAt = time.Time{}
	}
	assertSession(t, mustGet(t, s, "s1"), uncached(t, s, "s1"))
}

// A read that began before a write and ends after it has started is not
// kept: it may hold the row as it was.
func TestSessionCacheDropsAReadAcrossAWrite(t *testing.T) {
	c := newSessionCache()
	old := Session{ID: "s1", Cwd: "/old"}
	for _, tc := range []struct {
		what   string
		during func()
	}{
		{"a write under way", func() { c.reset(+1) }},
		{"a write begun and ended", func() { c.reset(+1); c.reset(-1) }},
	} {
		_, ok, epoch := c.lookup("s1", false)
		if ok {
			t.Fatalf("%s: a hit in an empty cache", tc.what)
		}
		tc.during()
		c.store("s1", old, epoch)
		if c.writing > 0 {
			c.reset(-1)
		}
		if _, ok, _ := c.lookup("s1", false); ok {
			t.Errorf("%s: the read from before it was kept", tc.what)
		}
	}
	// Nothing is answered while a write is under way.
	_, _, epoch := c.lookup("s1", false)
	c.store("s1", old, epoch)
	c.reset(+1)
	if _, ok, _ := c.lookup("s1", false); ok {
		t.Error("answered during a write")
	}
}

// In tests, a write of a session row that bypasses the cache is caught
// at the next cached answer.
func TestSessionCacheCatchesAWriteAround(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := context.Background()
	mustCreate(t, s, Session{ID: "s1", Name: "web"})
	s.Resolve(ctx, "web")
	if _, err := s.db.ExecContext(ctx, `UPDATE sessions SET cwd = '/elsewhere' WHERE id = 's1'`); err != nil {
		t.Fatal(err)
	}
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "bypassed") {
			t.Errorf("recover() = %v, want the cache's complaint", r)
		}
	}()
	s.Resolve(ctx, "web")
}

// Writers and readers at once (run with -race): once every write has
// returned, every lookup answers the last of them.
func TestSessionCacheConcurrent(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := context.Background()
	const sessions, writes = 4, 50
	for i := range sessions {
		mustCreate(t, s, Session{ID: fmt.Sprintf("s%d", i), Name: fmt.Sprintf("n%d", i)})
	}
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for w := range writes {
				if err := s.SetCwd(ctx, fmt.Sprintf("s%d", i), fmt.Sprintf("/d%d", w)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range writes {
				if _, err := s.Resolve(ctx, fmt.Sprintf("n%d", i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for i := range sessions {
		got, err := s.Resolve(ctx, fmt.Sprintf("n%d", i))
		if err != nil || got.Cwd != fmt.Sprintf("/d%d", writes-1) {
			t.Errorf("n%d: cwd %q, %v; want /d%d", i, got.Cwd, err, writes-1)
		}
	}
}

// A cached answer to a caller whose context has ended is still the
// answer: the check in tests has nothing to compare it with, and says
// nothing.
func TestSessionCacheCheckAfterTheCallerLeft(t *testing.T) {
	s, _, _ := openTest(t)
	mustCreate(t, s, Session{ID: "s1", Name: "web"})
	s.Resolve(context.Background(), "web")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, err := s.Resolve(ctx, "web"); err != nil || got.ID != "s1" {
		t.Errorf("Resolve with an ended context = %q, %v; want s1 from memory", got.ID, err)
	}
}
