package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/holder"
)

// The working directory is followed without the shell's help (/proc) and
// from OSC 7; it reaches the registry (ls) and meta.json.
func TestWorkingDirectoryIsTracked(t *testing.T) {
	e := newEnv(t)
	e.startServer()
	base := t.TempDir()
	spaced := filepath.Join(base, "a b")
	os.Mkdir(spaced, 0o755)
	id := strings.TrimSpace(e.mustTk("new", "--cwd", base, "--", "sh"))
	if s := e.session(id); s.Cwd != base {
		t.Fatalf("cwd at start %q, want %q", s.Cwd, base)
	}
	e.mustTk("send", id, "cd '"+spaced+"'")
	waitFor(t, 10*time.Second, "the registry to show the new directory", func() bool { return e.session(id).Cwd == spaced })
	waitFor(t, 10*time.Second, "meta.json to show it", func() bool {
		m, err := holder.ReadMeta(filepath.Join(e.dir, "sessions", id))
		return err == nil && m.Cwd == spaced
	})
	found := false
	for _, s := range e.ls() {
		found = found || (s.ID == id && s.Cwd == spaced)
	}
	if !found {
		t.Fatal("ls --json does not show the directory")
	}
	// A shell that reports its directory with OSC 7 (as shell integration
	// does) is believed, percent-decoding included.
	time.Sleep(1100 * time.Millisecond)
	e.mustTk("send", id, `printf '\033]7;file://localhost/srv/x%%20y\033\\'; echo`)
	waitFor(t, 10*time.Second, "the OSC 7 directory", func() bool { return e.session(id).Cwd == "/srv/x y" })
}
