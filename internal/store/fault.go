package store

import (
	"errors"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Faults of the registry file that are not termkeep's doing. Every error a
// Store returns because of one matches it with errors.Is, whatever the
// operation, and still matches the SQLite or system error beneath.
var (
	// ErrLocked: another process holds a write lock on the file (a
	// transaction in the sqlite3 shell, say) for longer than the busy
	// timeout (5 s), so this write gave up.
	ErrLocked = errors.New("store: the registry is locked by another process")
	// ErrReadOnly: the file cannot be written (a read-only file system or
	// a file this user may not write).
	ErrReadOnly = errors.New("store: the registry is read-only")
	// ErrDamaged: the file is not a SQLite database, or SQLite found it
	// corrupt (garbage over its header, a truncated file).
	ErrDamaged = errors.New("store: the registry is damaged")
	// ErrFull: the file system holding the registry has no room (a full
	// disk, a quota) for this write. It works again once room is made.
	ErrFull = errors.New("store: the registry's disk is full")
)

// fault returns the fault err is a case of, or nil.
func fault(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY:
			return ErrLocked
		case sqlite3.SQLITE_READONLY:
			return ErrReadOnly
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return ErrDamaged
		case sqlite3.SQLITE_FULL:
			return ErrFull
		}
		return nil
	}
	for _, e := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT} {
		if errors.Is(err, e) {
			return ErrFull
		}
	}
	// Creating the file, before SQLite sees it.
	for _, e := range []syscall.Errno{syscall.EROFS, syscall.EACCES, syscall.EPERM} {
		if errors.Is(err, e) {
			return ErrReadOnly
		}
	}
	return nil
}

// openError wraps an error of Open. SQLite answers only "unable to open
// database file" when it cannot create the -wal and -shm files WAL mode
// needs beside the registry: that is a read-only registry when the file or
// its directory cannot be written.
func openError(op, path string, err error) error {
	e := wrap(op, err).(*opError)
	var se *sqlite.Error
	if e.kind == nil && errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CANTOPEN &&
		(!writable(path) || !writable(filepath.Dir(path))) {
		e.kind = ErrReadOnly
	}
	return e
}

// writable reports whether this process may write path, as far as
// access(2) tells: a read-only file system says no even to root.
func writable(path string) bool {
	err := unix.Access(path, unix.W_OK)
	return !errors.Is(err, unix.EROFS) && !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM)
}
