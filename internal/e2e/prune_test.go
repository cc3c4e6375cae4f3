package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/sessiondir"
)

// kept reports whether the registry lists session id and its directory is
// there; gone, whether neither is (a removal in progress is neither).
func (e *env) kept(id string) bool {
	listed, dir := e.found(id)
	return listed && dir
}

func (e *env) gone(id string) bool {
	listed, dir := e.found(id)
	return !listed && !dir
}

func (e *env) found(id string) (listed, dir bool) {
	e.t.Helper()
	for _, s := range e.ls() {
		listed = listed || s.ID == id
	}
	_, err := os.Stat(e.dirOf(id))
	return listed, err == nil
}

func (e *env) dirOf(id string) string { return e.dir + "/sessions/" + id }

// endedSession creates a session that prints n bytes and exits, and waits
// until it has ended.
func (e *env) endedSession(n int) string {
	e.t.Helper()
	id := strings.TrimSpace(e.mustTk("new", "--no-shell-integration", "--", "sh", "-c", "head -c "+strconv.Itoa(n)+" /dev/zero | tr '\\0' x; echo"))
	waitFor(e.t, 30*time.Second, "session "+id+" to exit", func() bool { return e.session(id).State == "exited" })
	time.Sleep(20 * time.Millisecond) // a later end time for the next
	return id
}

// --keep-ended: past it the oldest ended sessions are removed, registry row
// and directory, each with a session.pruned event; an interrupted session
// is neither removed nor counted, and neither is a running one.
func TestPruneEndedCount(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e_test.go
	e := newEnv(t)
	e.serverArgs = []string{"--keep-ended", "2"}
	e.startServer()
	running := strings.TrimSpace(e.mustTk("new", "--", "sleep", "600"))
	intr := strings.TrimSpace(e.mustTk("new", "--", "sleep", "600"))
	m, err := sessiondir.ReadMeta(e.dirOf(intr))
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(m.HolderPid, syscall.SIGKILL)
	syscall.Kill(m.Pid, syscall.SIGKILL)
	waitFor(t, 30*time.Second, "the session to be interrupted", func() bool { return e.session(intr).State == "interrupted" })

	var ended []string
	for range 4 {
		ended = append(ended, e.endedSession(10))
	}
	waitFor(t, 30*time.Second, "the two oldest ended sessions to be pruned", func() bool {
		return e.gone(ended[0]) && e.gone(ended[1])
	})
	for _, id := range append([]string{running, intr}, ended[2:]...) {
		if !e.kept(id) {
			t.Errorf("session %s was removed", id)
		}
	}
	for _, id := range ended[:2] {
		kinds, evs := e.sessionEvents(id)
		if !slices.Contains(kinds, "session.pruned") {
			t.Errorf("session %s has no session.pruned event: %v", id, kinds)
		}
		for _, ev := range evs {
			if ev.Kind == "session.pruned" && !strings.Contains(string(ev.Detail), `"reason":"count"`) {
				t.Errorf("session.pruned without its reason: %s", ev.Detail)
			}
		}
	}
}

// --keep-ended-bytes, enforced when the server starts: sessions ended under
// a server without the bound go, oldest first, until the rest fit.
func TestPruneEndedBytesAtStart(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e_test.go
	e := newEnv(t)
	e.serverArgs = []string{"--keep-ended", "0", "--keep-ended-bytes", "0"}
	e.startServer()
	var ended []string
	for range 3 {
		ended = append(ended, e.endedSession(400_000))
	}
	time.Sleep(500 * time.Millisecond)
	for _, id := range ended {
		if !e.kept(id) {
			t.Fatalf("session %s was removed with no bound", id)
		}
	}
	// What counts is each session's directory: its log, and the screen
	// checkpoints beside it. The bound leaves room for the newer two.
	// (Half the oldest's size is slack for checkpoints a new server writes.)
	bound := dirBytes(t, e.dirOf(ended[1])) + dirBytes(t, e.dirOf(ended[2])) + dirBytes(t, e.dirOf(ended[0]))/2
	e.srv.cmd.Process.Signal(syscall.SIGTERM)
	e.srv.Wait()
	e.srv = nil
	e.serverArgs = []string{"--keep-ended-bytes", strconv.FormatInt(bound, 10)}
	e.startServer()
	waitFor(t, 30*time.Second, "the oldest ended session to be pruned", func() bool { return e.gone(ended[0]) })
	for _, id := range ended[1:] {
		if !e.kept(id) {
			t.Errorf("session %s was removed: the newer two fit in %d bytes", id, bound)
		}
	}
	if kinds, _ := e.sessionEvents(ended[0]); !slices.Contains(kinds, "session.pruned") {
		t.Errorf("no session.pruned event: %v", kinds)
	}
}

func dirBytes(t *testing.T, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			info, err := d.Info()
			if err == nil {
				n += info.Size()
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
