// Package statedir locates termkeep's one state directory and the files in
// it. Everything termkeep keeps lives here: mode 0700, files 0600.
package statedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Dir is a resolved state directory.
type Dir string

// EnvVar names the environment variable that sets the state directory.
const EnvVar = "TERMKEEP_STATE_DIR"

// Default returns the default state directory: $XDG_STATE_HOME/termkeep, else
// ~/.local/state/termkeep.
func Default() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "termkeep"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("statedir: no home directory to put the state in (set %s): %w", EnvVar, err)
	}
	return filepath.Join(home, ".local", "state", "termkeep"), nil
}

// Resolve picks the state directory: flag, then $TERMKEEP_STATE_DIR, then the
// default. The result is absolute.
func Resolve(flag string) (Dir, error) {
	p := flag
	if p == "" {
		p = os.Getenv(EnvVar)
	}
	if p == "" {
		var err error
		if p, err = Default(); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("statedir: %w", err)
	}
	return Dir(abs), nil
}

// Ensure creates the directory (and sessions/) with mode 0700, and checks
// an existing one before anything in it is trusted: it must be a directory
// owned by the current user and writable by nobody else, or another user
// could have put a socket, a registry or a token of their own in it. Such a
// directory is refused with a sentence saying how to fix it; one that is
// only readable by others is tightened to 0700.
func (d Dir) Ensure() error {
	for _, p := range []string{string(d), d.SessionsDir()} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			return fmt.Errorf("statedir: create %s: %w", p, err)
		}
		st, err := trusted(p)
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, 0o700); err != nil {
				return fmt.Errorf("statedir: restrict %s to 0700: %w", p, err)
			}
		}
	}
	return nil
}

// Check is Ensure's check of the directory itself, without creating or
// changing anything: what a client runs before it talks to the socket in
// it or reads a file from it. A directory that does not exist passes (it
// holds nothing to trust); one that another user owns, or may write to, is
// refused with the sentence Ensure gives.
func (d Dir) Check() error {
	_, err := trusted(string(d))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// trusted returns the directory p (a link to it followed only when the
// link is the user's own) once checkDir has found it trustworthy.
func trusted(p string) (os.FileInfo, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, fmt.Errorf("statedir: %w", err)
	}
	if st.Mode()&os.ModeSymlink != 0 {
		// A link is followed only when it is the user's own: one that
		// another user owns could be pointed elsewhere at any time.
		if err := checkOwner(p, st); err != nil {
			return nil, err
		}
		if st, err = os.Stat(p); err != nil {
			return nil, fmt.Errorf("statedir: %w", err)
		}
	}
	if err := checkDir(p, st); err != nil {
		return nil, err
	}
	return st, nil
}

// checkDir refuses a state directory (or its sessions/) that another user
// controls or could write to.
func checkDir(p string, st os.FileInfo) error {
	if !st.IsDir() {
		return fmt.Errorf("statedir: %s is not a directory; "+
			"move it away or pick another state directory with --state-dir or %s", p, EnvVar)
	}
	if err := checkOwner(p, st); err != nil {
		return err
	}
	if mode := st.Mode().Perm(); mode&0o022 != 0 {
		return fmt.Errorf("statedir: %s is writable by other users (mode %04o), so its contents cannot be trusted; "+
			"run `chmod 700 %s` and check that nothing in it is foreign, then start again", p, mode, p)
	}
	return nil
}

func checkOwner(p string, st os.FileInfo) error {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return fmt.Errorf("statedir: %s belongs to uid %d, not to you (uid %d); "+
			"use a state directory of your own (--state-dir or %s), or `chown %d %s` if it is yours",
			p, sys.Uid, os.Getuid(), EnvVar, os.Getuid(), p)
	}
	return nil
}

func (d Dir) String() string { return string(d) }

// DB is the registry database.
func (d Dir) DB() string { return filepath.Join(string(d), "termkeep.db") }

// Socket is the server's API socket.
func (d Dir) Socket() string { return filepath.Join(string(d), "server.sock") }

// ServerLog is where a background server writes its log.
func (d Dir) ServerLog() string { return filepath.Join(string(d), "server.log") }

// ServerLock is held by the running server for its whole life.
func (d Dir) ServerLock() string { return filepath.Join(string(d), "server.lock") }

// Stopped exists while the last server was stopped on purpose (termkeep
// shutdown, SIGTERM, Ctrl-C) and none has started since: clients that
// lost their connection wait for a server instead of starting one.
func (d Dir) Stopped() string { return filepath.Join(string(d), "server.stopped") }

// StoppedOnPurpose reports whether Stopped is there.
func (d Dir) StoppedOnPurpose() bool {
	_, err := os.Lstat(d.Stopped())
	return err == nil
}

// StartLock serialises clients that start a server in the background.
func (d Dir) StartLock() string { return filepath.Join(string(d), "autostart.lock") }

// SessionsDir holds one directory per session.
func (d Dir) SessionsDir() string { return filepath.Join(string(d), "sessions") }

// Session is the directory of session id.
func (d Dir) Session(id string) string { return filepath.Join(d.SessionsDir(), id) }

// Token holds the owner token browsers present on the TCP listener.
func (d Dir) Token() string { return filepath.Join(string(d), "token") }

// URL holds the address of the server's TCP listener, written by the server
// that listens on it.
func (d Dir) URL() string { return filepath.Join(string(d), "url") }
