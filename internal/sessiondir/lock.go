package sessiondir

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// A session directory has one holder at a time: it alone writes the log,
// meta.json and holder.sock. The holder takes an exclusive flock on
// LockFile before it touches any of them and keeps it until it exits, when
// the kernel lets it go, however the holder ends.

// HolderRuns reports whether a holder runs for the session in dir: its
// socket accepts a connection, or its lock is held. Neither depends on
// meta.json, which may be unreadable while its holder runs.
func HolderRuns(dir string) bool {
	if SocketAnswers(dir) {
		return true
	}
	held, _ := LockHeld(dir)
	return held
}

// LockHeld reports whether a holder holds dir's lock; known is false when
// there is no lock file (no holder ran here since holders took the lock).
func LockHeld(dir string) (held, known bool) {
	f, err := os.Open(filepath.Join(dir, LockFile))
	if err != nil {
		return false, false
	}
	defer f.Close()
	// A shared lock for a moment: a holder starting meanwhile retries.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return errors.Is(err, unix.EWOULDBLOCK), true
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false, true
}

// SocketAnswers reports whether something listens on dir's holder.sock. A
// holder takes a connection that sends no hello for nothing: the server it
// serves keeps its own.
func SocketAnswers(dir string) bool {
	c, err := net.DialTimeout("unix", filepath.Join(dir, SocketFile), 2*time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// AwaitHolderGone waits, for at most within (and ctx), until no holder
// runs for dir, and reports whether none does. A holder whose child has
// ended and whose exit the server already has still closes its
// connections and syncs before it lets go of the directory: a restore
// right after the end waits for that instead of failing.
func AwaitHolderGone(ctx context.Context, dir string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		if !HolderRuns(dir) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ErrHolderRuns is returned by UpdateMeta while a holder holds the
// session's lock: meta.json is that holder's to write.
var ErrHolderRuns = errors.New("sessiondir: a holder runs for this session and writes its meta.json")

// UpdateMeta changes the meta.json of a session whose holder is gone:
// with the session's lock held (so no holder starts meanwhile, and none
// runs), it reads meta.json, lets change edit it, and writes it back when
// change reports a change. It fails with ErrHolderRuns, without waiting,
// while a holder holds the lock, and when the holder's socket answers (a
// holder from before the lock).
func UpdateMeta(dir string, change func(*Meta) bool) error {
	if SocketAnswers(dir) {
		return ErrHolderRuns
	}
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("sessiondir: open lock: %w", err)
	}
	defer f.Close() // and the lock with it
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return ErrHolderRuns
		}
		return fmt.Errorf("sessiondir: lock: %w", err)
	}
	m, err := ReadMeta(dir)
	if err != nil {
		return err
	}
	if !change(&m) {
		return nil
	}
	return WriteMeta(dir, m)
}
