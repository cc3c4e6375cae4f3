// Package statedir locates termkeep's one state directory and the files in
// it. Everything termkeep keeps lives here: mode 0700, files 0600.
package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// Ensure creates the directory (and sessions/) with mode 0700 and tightens
// the mode of an existing one that is looser.
func (d Dir) Ensure() error {
	for _, p := range []string{string(d), d.SessionsDir()} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			return fmt.Errorf("statedir: create %s: %w", p, err)
		}
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("statedir: %w", err)
		}
		if !st.IsDir() {
			return errors.New("statedir: " + p + " is not a directory")
		}
		if st.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, 0o700); err != nil {
				return fmt.Errorf("statedir: restrict %s to 0700: %w", p, err)
			}
		}
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
