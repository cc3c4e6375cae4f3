package holder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/sessiondir"
)

// lockDir takes dir's writer lock (see sessiondir.LockFile), or says which holder has it. A holder
// from before the lock existed is found by its socket instead.
func lockDir(dir string) (*os.File, error) {
	if sessiondir.SocketAnswers(dir) {
		return nil, errors.New("another holder runs for this session (its socket answers): it keeps the log; end it first")
	}
	path := filepath.Join(dir, sessiondir.LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("holder: open %s: %w", path, err)
	}
	// A probe (sessiondir.LockHeld) holds a shared lock for a moment: try for a while.
	deadline := time.Now().Add(time.Second)
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			b, _ := os.ReadFile(path)
			who := ""
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				who = fmt.Sprintf(" (pid %d)", pid)
			}
			return nil, fmt.Errorf("another holder%s runs for this session: it keeps the log; end it first", who)
		}
		return nil, fmt.Errorf("holder: lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
