package restart

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

	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
)

// kept reports whether the registry lists session id and its directory is
// there; gone, whether neither is (a removal in progress is neither).
func kept(e *e2e.Env, id string) bool {
	listed, dir := found(e, id)
	return listed && dir
}

func gone(e *e2e.Env, id string) bool {
	listed, dir := found(e, id)
	return !listed && !dir
}

func found(e *e2e.Env, id string) (listed, dir bool) {
	e.T.Helper()
	for _, s := range e.Ls() {
		listed = listed || s.ID == id
	}
	_, err := os.Stat(dirOf(e, id))
	return listed, err == nil
}

func dirOf(e *e2e.Env, id string) string { return e.Dir + "/sessions/" + id }

// endedSession creates a session that prints n bytes and exits, and waits
// until it has ended.
func endedSession(e *e2e.Env, n int) string {
	e.T.Helper()
	id := strings.TrimSpace(e.MustTk("new", "--no-shell-integration", "--", "sh", "-c", "head -c "+strconv.Itoa(n)+" /dev/zero | tr '\\0' x; echo"))
	e2e.WaitFor(e.T, 30*time.Second, "session "+id+" to exit", func() bool { return e.Session(id).State == "exited" })
	time.Sleep(20 * time.Millisecond) // a later end time for the next
	return id
}

// --keep-ended: past it the oldest ended sessions are removed, registry row
// and directory, each with a session.pruned event; an interrupted session
// is neither removed nor counted, and neither is a running one.
func TestPruneEndedCount(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.ServerArgs = []string{"--keep-ended", "2"}
	e.StartServer()
	running := strings.TrimSpace(e.MustTk("new", "--", "sleep", "600"))
	intr := strings.TrimSpace(e.MustTk("new", "--", "sleep", "600"))
	m, err := sessiondir.ReadMeta(dirOf(e, intr))
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(m.HolderPid, syscall.SIGKILL)
	syscall.Kill(m.Pid, syscall.SIGKILL)
	e2e.WaitFor(t, 30*time.Second, "the session to be interrupted", func() bool { return e.Session(intr).State == "interrupted" })

	var ended []string
	for range 4 {
		ended = append(ended, endedSession(e, 10))
	}
	e2e.WaitFor(t, 30*time.Second, "the two oldest ended sessions to be pruned", func() bool {
		return gone(e, ended[0]) && gone(e, ended[1])
	})
	for _, id := range append([]string{running, intr}, ended[2:]...) {
		if !kept(e, id) {
			t.Errorf("session %s was removed", id)
		}
	}
	for _, id := range ended[:2] {
		kinds, evs := e.SessionEvents(id)
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
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.ServerArgs = []string{"--keep-ended", "0", "--keep-ended-bytes", "0"}
	e.StartServer()
	var ended []string
	for range 3 {
		ended = append(ended, endedSession(e, 400_000))
	}
	time.Sleep(500 * time.Millisecond)
	for _, id := range ended {
		if !kept(e, id) {
			t.Fatalf("session %s was removed with no bound", id)
		}
	}
	// What counts is each session's directory: its log, and the screen
	// checkpoints beside it. The bound leaves room for the newer two.
	// (Half the oldest's size is slack for checkpoints a new server writes.)
	bound := dirBytes(t, dirOf(e, ended[1])) + dirBytes(t, dirOf(e, ended[2])) + dirBytes(t, dirOf(e, ended[0]))/2
	e.Srv.Cmd.Process.Signal(syscall.SIGTERM)
	e.Srv.Wait()
	e.Srv = nil
	e.ServerArgs = []string{"--keep-ended-bytes", strconv.FormatInt(bound, 10)}
	e.StartServer()
	e2e.WaitFor(t, 30*time.Second, "the oldest ended session to be pruned", func() bool { return gone(e, ended[0]) })
	for _, id := range ended[1:] {
		if !kept(e, id) {
			t.Errorf("session %s was removed: the newer two fit in %d bytes", id, bound)
		}
	}
	if kinds, _ := e.SessionEvents(ended[0]); !slices.Contains(kinds, "session.pruned") {
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
