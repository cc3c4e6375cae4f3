package holder

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/server/restorepolicy"
	"termkeep/internal/sessiondir"
)

// fullDisk is what a full file system does to the holder's records: while
// full, a write that needs a new block (anything written to a new file,
// or past a file's end) fails with ENOSPC; an overwrite of bytes a file
// already has does not.
type fullDisk struct{ full atomic.Bool }

func (d *fullDisk) through(f *os.File) sessiondir.File { return &fullFile{File: f, d: d} }

type fullFile struct {
	*os.File
	d *fullDisk
}

func (f *fullFile) Write(p []byte) (int, error) {
	if f.d.full.Load() && len(p) > 0 {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.Write(p)
}

func (f *fullFile) WriteAt(p []byte, off int64) (int, error) {
	if st, err := f.File.Stat(); err == nil && f.d.full.Load() && off+int64(len(p)) > st.Size() {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.WriteAt(p, off)
}

// exitsWhenTold is a job that prints, waits for the file "go" in its
// directory, prints again and exits 7.
const exitsWhenTold = `echo start; while [ ! -e go ]; do sleep 0.05; done; echo bye; exit 7`

// The child exits while the disk is full, so meta.json cannot record its
// end: the status record, made when the holder started, takes it in
// place. meta.json read as every reader reads it says exited 7, and the
// restore policy never runs the job again. (Before, the end was lost,
// the session read as interrupted, and --auto-restore ran it again.)
func TestExitSurvivesFullDisk(t *testing.T) {
	d := &fullDisk{}
	th := startHolderWith(t, exitsWhenTold, Spec{}, d.through)
	th.waitEnd(uint64(len("start\n")))
	d.full.Store(true)
	if err := os.WriteFile(filepath.Join(th.dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := th.endedMeta()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(th.dir, sessiondir.MetaFile))
	if strings.Contains(string(raw), "ended_at") {
		t.Fatalf("meta.json was written on a full disk:\n%s", raw)
	}
	if m.State() != "exited" || m.ExitCode == nil || *m.ExitCode != 7 || m.End != uint64(len("start\nbye\n")) {
		t.Fatalf("the session reads as %s (%+v), want exited 7 at %d", m.State(), m, len("start\nbye\n"))
	}
	notAgain(t, m)
}

// notAgain checks that the restore policy, told the worst a registry can
// say of the session (interrupted, auto-restore), does not restore it.
func notAgain(t *testing.T, m sessiondir.Meta) {
	t.Helper()
	for _, mode := range []restorepolicy.Mode{restorepolicy.Auto, restorepolicy.All} {
		d := restorepolicy.Decide(restorepolicy.Record{State: "interrupted", AutoRestore: true, ChildExited: m.ChildExited()}, "", mode)
		if d.Restore {
			t.Fatalf("the restore policy (mode %d) would run the finished job again", mode)
		}
	}
}

// A disk full since before the holder started leaves it no status record
// either: when the child exits, the holder keeps trying, still serving (a
// server that connects is told the end), and records the end once there
// is room. (Before, it ended at once with the end unrecorded.)
func TestEndWaitsForRoom(t *testing.T) {
	d := &fullDisk{}
	d.full.Store(true)
	th := startHolderWith(t, exitsWhenTold, Spec{}, d.through)
	th.waitEnd(uint64(len("start\n")))
	if th.h.status != nil {
		t.Fatal("a status record was made on a full disk")
	}
	os.WriteFile(filepath.Join(th.dir, "go"), nil, 0o600)
	s, wel := th.connect(0)
	st := &stream{}
	s.readTo(st, 1<<62)
	if st.exit == nil || st.exit.State != "exited" || *st.exit.ExitCode != 7 || string(st.data) != "start\nbye\n" {
		t.Fatalf("a server was told %+v after %q (welcome %+v), want exited 7 after start and bye", st.exit, st.data, wel)
	}
	select {
	case <-th.done:
		t.Fatal("the holder ended with its end unrecorded")
	case <-time.After(2 * endRetry):
	}
	s2, _ := th.connect(0)
	st2 := &stream{}
	s2.readTo(st2, 1<<62)
	if st2.exit == nil || *st2.exit.ExitCode != 7 {
		t.Fatalf("a server that connected while the holder waited was told %+v", st2.exit)
	}
	d.full.Store(false)
	m, err := th.endedMeta()
	if err != nil || m.State() != "exited" || *m.ExitCode != 7 {
		t.Fatalf("meta.json %+v, %v; want exited 7 once there is room", m, err)
	}
	notAgain(t, m)
}

// A holder that dies while it lingers (its child exited, a job it left
// behind still printing) leaves the child's exit recorded: the session is
// not a job to run again.
func TestChildExitRecordedWhileLingering(t *testing.T) {
	d := &fullDisk{}
	th := startHolderWith(t, `echo start; (trap '' HUP; exec sleep 600) & while [ ! -e go ]; do sleep 0.05; done; exit 3`, Spec{Linger: time.Minute}, d.through)
	th.waitEnd(uint64(len("start\n")))
	d.full.Store(true) // meta.json cannot take it; the status record does
	os.WriteFile(filepath.Join(th.dir, "go"), nil, 0o600)
	deadline := time.Now().Add(wait)
	for {
		m, err := sessiondir.ReadMeta(th.dir)
		if err == nil && m.Child != nil {
			if m.State() != "running" || m.Child.ExitCode != 3 {
				t.Fatalf("while lingering: %s, child %+v; want running with the child's exit 3", m.State(), m.Child)
			}
			notAgain(t, m)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child's exit is not recorded %v after it: %+v, %v", wait, m, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
