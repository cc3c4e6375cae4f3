// Package store is termkeep's registry: the durable record of sessions (and,
// later, workspaces, users, tokens and events) in one SQLite file in the state
// directory.
//
// What it guarantees:
//
//   - One writer. The server is the only process that opens the registry; a
//     Store is safe for concurrent use by any number of goroutines, and every
//     method is one transaction: it happens entirely or not at all.
//   - Durable and private. The file is created with mode 0600 and kept in WAL
//     mode with synchronous=NORMAL: a committed change survives a crash of the
//     server; a power cut may lose the last few commits, never corrupt the file.
//   - Versioned schema. Open applies the migrations this binary knows, each in
//     its own transaction and exactly once, and refuses a file written by a
//     newer termkeep or by something other than termkeep.
//   - Session states only move forward: running (or paused) to one ended state,
//     and the first ending wins. Restart is the one explicit way back.
//   - A session name, when set, belongs to at most one existing session;
//     deleting the session frees it.
//   - A rollback is told. SQLite opens a registry whose WAL was lost at
//     its last checkpoint without a word; the generation kept beside it
//     (generation.go) makes Open say so (Generation) until ClearRollback.
//     A copy of the workspaces is kept beside it too, for a rebuild.
//   - Times go in from the injected clock and come back in UTC with nanosecond
//     precision.
//   - Errors are named "store: …" and carry the operation; ErrNotFound,
//     ErrNameTaken and ErrNotRunning are matched with errors.Is, and so are
//     the faults of the file itself: ErrLocked, ErrReadOnly, ErrDamaged,
//     ErrFull.
//
// Validating names, ids and commands is the caller's job, not the store's.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Store is an open registry. Its methods may be called from any goroutine.
type Store struct {
	db   *sql.DB
	path string
	now  func() time.Time

	sessions *sessionCache // rows of sessions, kept between writes (sessioncache.go)
	tokens   *tokenCache   // rows of tokens by secret, kept between writes (tokencache.go)

	// genMu guards the generation's state (generation.go).
	genMu      sync.Mutex
	gen        GenerationCheck
	genReady   bool   // Open has compared the generations
	genWritten uint64 // the generation last written beside the registry

	wsMu sync.Mutex // serializes writes of the workspaces' copy (workspace.go)

	failWrites atomic.Pointer[error] // FailWrites
}

// FailWrites makes every write transaction fail with err, classified as
// the store classifies the system's errors (syscall.ENOSPC: ErrFull),
// until it is called with nil: how tests stand a disk that fills and is
// freed under a registry without mounting one.
func (s *Store) FailWrites(err error) {
	if err == nil {
		s.failWrites.Store(nil)
		return
	}
	s.failWrites.Store(&err)
}

// timeFormat is RFC 3339 with a fixed-width fraction, so that stored times
// sort as text in the same order as in time (time.RFC3339Nano drops trailing
// zeros, which breaks that).
const timeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// Open opens the registry at path, creating it (mode 0600) if it does not
// exist; the parent directory must exist. It brings the schema up to date and
// fails, without changing the file, if the file is not a termkeep registry or
// was written by a newer termkeep. now is the clock for every time the store
// records; nil means time.Now.
func Open(ctx context.Context, path string, now func() time.Time) (*Store, error) {
	return open(ctx, path, now, migrations, true)
}

// OpenToCheck is Open for a look at the registry (termkeep doctor without
// a fix): it compares the registry's generation with the one kept beside
// it but writes that file only through a change, so a rollback it finds
// is still new to the server that opens the registry next.
func OpenToCheck(ctx context.Context, path string, now func() time.Time) (*Store, error) {
	return open(ctx, path, now, migrations, false)
}

func open(ctx context.Context, path string, now func() time.Time, migs []string, recordGen bool) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, wrap("open "+path, err)
	}
	if err := createPrivate(abs); err != nil {
		return nil, wrap("open "+path, err)
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, wrap("open "+path, err)
	}
	// One connection serializes every call in this process; that is all a
	// single-writer registry needs, and it rules out SQLITE_BUSY between our
	// own goroutines. busy_timeout covers other processes (someone reading the
	// file with the sqlite3 shell).
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)

	s := &Store{db: db, path: path, now: now, sessions: newSessionCache(), tokens: newTokenCache()}
	if err := s.init(ctx, migs); err != nil {
		db.Close()
		return nil, openError("open "+path, abs, err)
	}
	if len(migs) >= genMigration {
		if err := s.checkGeneration(ctx, recordGen); err != nil {
			db.Close()
			return nil, openError("open "+path, abs, err)
		}
	}
	return s, nil
}

// createPrivate creates the database file with mode 0600 if it is missing, so
// SQLite never creates it with the umask's default. SQLite gives the -wal and
// -shm files the mode of the database file. An existing file is left as it is.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	// The umask can only narrow 0600, but make the mode exact anyway.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dsn builds a file: URI so that any character in path ('?', '#', '%') reaches
// SQLite intact. The pragmas are applied to every new connection.
func dsn(path string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// Write transactions take the write lock at BEGIN; a deferred transaction
	// that reads first and then writes can fail with SQLITE_BUSY at once,
	// without waiting for busy_timeout.
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	return u.String()
}

// init checks the connection and the file, then migrates.
func (s *Store) init(ctx context.Context, migs []string) error {
	if err := s.db.PingContext(ctx); err != nil {
		return explainOpenErr(err)
	}
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return explainOpenErr(err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, not WAL (does the file system support it?)", mode)
	}
	if err := s.migrate(ctx, migs); err != nil {
		return err
	}
	// SQLite opens a file it may not write read-only and says so only at
	// the first write: make that now, so a registry the server could not
	// record anything in fails here (ErrReadOnly), not at a create.
	_, err := s.db.ExecContext(ctx, `DELETE FROM schema_migrations WHERE version < 0`)
	return err
}

func explainOpenErr(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_NOTADB {
		return fmt.Errorf("the file is not a SQLite database, so not a termkeep registry (%w)", err)
	}
	return err
}

// Close closes the registry. Calls made after Close fail.
func (s *Store) Close() error {
	return wrap("close "+s.path, s.db.Close())
}

// inTx runs fn in a write transaction and commits if fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if err := s.failWrites.Load(); err != nil {
		return *err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.changed(ctx)
	return nil
}

// nowText is the clock's current time in the stored format.
func (s *Store) nowText() string { return formatTime(s.now()) }

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// opError names the failed operation: "store: end session abc: session not
// found". The wrapped error keeps its identity for errors.Is, and a fault
// of the file (fault.go) matches too.
type opError struct {
	op   string
	err  error
	kind error // ErrLocked, ErrReadOnly, ErrDamaged, ErrFull or nil
}

func (e *opError) Error() string {
	// Sentinels carry their own "store: " prefix; say it once.
	return "store: " + e.op + ": " + strings.TrimPrefix(e.err.Error(), "store: ")
}

func (e *opError) Unwrap() []error {
	if e.kind == nil {
		return []error{e.err}
	}
	return []error{e.err, e.kind}
}

// wrap returns nil for a nil err.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return &opError{op: op, err: err, kind: fault(err)}
}
