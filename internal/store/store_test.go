package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a test clock: each reading is one millisecond after the last, so
// every recorded time is distinct and predictable.
type clock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func openTest(t testing.TB) (*Store, *clock, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "termkeep.db")
	c := newClock()
	s, err := Open(context.Background(), path, c.Now)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c, path
}

// appliedMigrations reads schema_migrations straight from the file.
func appliedMigrations(t *testing.T, s *Store) map[int]string {
	t.Helper()
	rows, err := s.db.Query(`SELECT version, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[int]string{}
	for rows.Next() {
		var v int
		var at string
		if err := rows.Scan(&v, &at); err != nil {
			t.Fatal(err)
		}
		m[v] = at
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOpenSetsPragmas(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := context.Background()
	for _, tc := range []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"busy_timeout", "5000"},
		{"foreign_keys", "1"},
		{"synchronous", "1"}, // NORMAL
	} {
		var got string
		if err := s.db.QueryRowContext(ctx, "PRAGMA "+tc.pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", tc.pragma, err)
		}
		if got != tc.want {
			t.Errorf("PRAGMA %s = %q, want %q", tc.pragma, got, tc.want)
		}
	}
}

func TestFileMode(t *testing.T) {
	s, _, path := openTest(t)
	// A write makes sure the WAL exists too.
	if err := s.CreateSession(context.Background(), Session{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %o, want 600", filepath.Base(p), m)
		}
	}
}

func TestOpenOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir?#%20")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "reg?x#y%41.db")
	s, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := s.CreateSession(context.Background(), Session{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the given path: %v", err)
	}
}

func TestOpenMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope", "termkeep.db")
	_, err := Open(context.Background(), path, nil)
	if err == nil {
		t.Fatal("Open in a missing directory succeeded")
	}
	if !strings.HasPrefix(err.Error(), "store: open ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error = %v, want store: open … wrapping ErrNotExist", err)
	}
}

func TestReopenKeepsDataAndMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "termkeep.db")
	c := newClock()
	s, err := Open(ctx, path, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	want := Session{ID: "a", Name: "web", Command: []string{"bash", "-l"}, Cwd: "/tmp"}
	if err := s.CreateSession(ctx, want); err != nil {
		t.Fatal(err)
	}
	before := appliedMigrations(t, s)
	if len(before) != len(migrations) {
		t.Fatalf("applied %d migrations, want %d", len(before), len(migrations))
	}
	got1, err := s.Session(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for i := 0; i < 2; i++ {
		s, err = Open(ctx, path, c.Now)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		got2, err := s.Session(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		assertSession(t, got2, got1)
		after := appliedMigrations(t, s)
		if len(after) != len(before) {
			t.Fatalf("after reopen %d migrations, want %d", len(after), len(before))
		}
		for v, at := range before {
			if after[v] != at {
				t.Errorf("migration %d re-applied: applied_at %q, was %q", v, after[v], at)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLaterMigrationAppliedOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "termkeep.db")
	s, err := open(ctx, path, nil, migrations, true)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	// A second migration that would fail if it ran twice.
	next := append(append([]string{}, migrations...),
		`CREATE TABLE later (x INTEGER); INSERT INTO later VALUES (1);`)
	for i := 0; i < 2; i++ {
		s, err := open(ctx, path, nil, next, true)
		if err != nil {
			t.Fatalf("open with a new migration (round %d): %v", i, err)
		}
		var n int
		if err := s.db.QueryRow(`SELECT count(*) FROM later`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("later has %d rows, want 1", n)
		}
		if got := len(appliedMigrations(t, s)); got != len(next) {
			t.Errorf("%d migrations recorded, want %d", got, len(next))
		}
		s.Close()
	}

	// The older binary now meets a newer schema.
	_, err = open(ctx, path, nil, migrations, true)
	if err == nil || !strings.Contains(err.Error(), "newer than this termkeep knows") {
		t.Fatalf("open by older binary: err = %v, want a newer-schema refusal", err)
	}
}

func TestFailedMigrationRollsBack(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "termkeep.db")
	bad := append(append([]string{}, migrations...),
		`CREATE TABLE half (x INTEGER); THIS IS NOT SQL;`)
	_, err := open(ctx, path, nil, bad, true)
	if err == nil {
		t.Fatal("open with a broken migration succeeded")
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("migrate schema to version %d", len(migrations)+1)) {
		t.Errorf("error = %v, want it to name the migration", err)
	}
	s, err := open(ctx, path, nil, migrations, true)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if got := len(appliedMigrations(t, s)); got != len(migrations) {
		t.Errorf("%d migrations recorded, want %d", got, len(migrations))
	}
	var n int
	s.db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'half'`).Scan(&n)
	if n != 0 {
		t.Error("the broken migration's first statement was kept")
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	s, _, path := openTest(t)
	if err := s.CreateSession(ctx, Session{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`INSERT INTO schema_migrations VALUES (?, '2099-01-01T00:00:00Z')`, len(migrations)+5); err != nil {
		t.Fatal(err)
	}
	s.Close()

	_, err := Open(ctx, path, nil)
	if err == nil {
		t.Fatal("Open accepted a newer schema")
	}
	msg := err.Error()
	for _, want := range []string{"store: open ", "schema version", "newer than this termkeep knows"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
}

func TestGarbageFileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "termkeep.db")
	garbage := []byte(strings.Repeat("this is not a database, just some text\n", 200))
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), path, nil)
	if err == nil {
		t.Fatal("Open accepted a garbage file")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "store: open ") || !strings.Contains(msg, "not a SQLite database") {
		t.Errorf("error = %q, want a clear not-a-database message", msg)
	}
	got, _ := os.ReadFile(path)
	if string(got) != string(garbage) {
		t.Error("Open changed the garbage file")
	}
}

func TestForeignSQLiteRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE photos (id INTEGER)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	_, err = Open(context.Background(), path, nil)
	if err == nil || !strings.Contains(err.Error(), "not a termkeep registry") {
		t.Fatalf("err = %v, want a not-a-termkeep-registry refusal", err)
	}
}

func TestClosedStore(t *testing.T) {
	s, _, _ := openTest(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sessions(context.Background()); err == nil {
		t.Error("Sessions after Close succeeded")
	}
}
