package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A write that another process's write transaction holds off past the busy
// timeout fails with ErrLocked; reads go on (WAL).
func TestFaultLocked(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the 5 s busy timeout")
	}
	s, _, path := openTest(t)
	ctx := context.Background()
	mustCreate(t, s, Session{ID: "a", State: StateRunning})
	other, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(ctx, nil) // _txlock=immediate: the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := s.Session(ctx, "a"); err != nil {
		t.Errorf("a read beside the lock: %v", err)
	}
	err = s.CreateSession(ctx, Session{ID: "b", State: StateRunning})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("CreateSession under another's lock: %v, want ErrLocked", err)
	}
	t.Log(err)
	tx.Rollback()
	if err := s.CreateSession(ctx, Session{ID: "b", State: StateRunning}); err != nil {
		t.Errorf("CreateSession once the lock is gone: %v", err)
	}
}

// A write SQLite refuses as read-only matches ErrReadOnly.
func TestFaultReadOnly(t *testing.T) {
	_, _, path := openTest(t)
	ro, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, err = ro.Exec(`DELETE FROM sessions`)
	if err == nil {
		t.Fatal("a write through a read-only connection succeeded")
	}
	if got := wrap("delete", err); !errors.Is(got, ErrReadOnly) {
		t.Errorf("%v: not ErrReadOnly", got)
	}
}

// Garbage over the header and a truncated file are ErrDamaged, from Open or
// from the first read.
func TestFaultDamaged(t *testing.T) {
	for name, damage := range map[string]func(path string) error{
		"garbage header": func(path string) error {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt([]byte("this is not a SQLite header, not at all"), 0)
			return err
		},
		"truncated": func(path string) error { return os.Truncate(path, 4096+100) },
	} {
		t.Run(name, func(t *testing.T) {
			s, c, path := openTest(t)
			ctx := context.Background()
			for i := range 200 {
				mustCreate(t, s, Session{ID: fmt.Sprintf("s%03d", i), Command: []string{"sh", "-c", "a fairly long command line " + name}, State: StateRunning})
			}
			s.Close() // checkpoints the WAL into the file
			if err := damage(path); err != nil {
				t.Fatal(err)
			}
			s, err := Open(ctx, path, c.Now)
			if err == nil {
				defer s.Close()
				_, err = s.Sessions(ctx)
			}
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("after %s: %v, want ErrDamaged", name, err)
			}
			t.Log(err)
		})
	}
}

// A write SQLite refuses for want of room (SQLITE_FULL: here the file at
// its max_page_count, as a full disk makes it) matches ErrFull, and so do
// the system's ENOSPC and EDQUOT: a refusal that time lifts, so a
// session's end is written again (the server's registry.go).
func TestFaultFull(t *testing.T) {
	_, _, path := openTest(t)
	full, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	full.SetMaxOpenConns(1)
	ctx := context.Background()
	var pages int
	if err := full.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := full.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 2000)
	for i := 0; ; i++ {
		_, err = full.ExecContext(ctx, `INSERT INTO events (at, kind, detail) VALUES ('now', 'fill', ?)`, pad)
		if err != nil || i > 10000 {
			break
		}
	}
	if got := wrap("add event", err); !errors.Is(got, ErrFull) || errors.Is(got, ErrReadOnly) {
		t.Fatalf("%v: not ErrFull", got)
	} else {
		t.Log(got)
	}
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT} {
		if got := wrap("create", fmt.Errorf("write: %w", e)); !errors.Is(got, ErrFull) {
			t.Errorf("%v: not ErrFull", got)
		}
	}
}
