package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/outlog"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
	"termkeep/internal/store"
)

// newState makes a state directory with an empty registry.
func newState(t *testing.T) statedir.Dir {
	t.Helper()
	d := statedir.Dir(t.TempDir())
	if err := d.Ensure(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), d.DB(), nil)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	return d
}

// addSession makes sessions/<id> with a meta.json whose holder is not
// running (the holder pid is this test process, which is not a holder), a
// log holding some output, and, when register is set, a registry row.
func addSession(t *testing.T, d statedir.Dir, id string, exit *int, register bool) {
	t.Helper()
	dir := d.Session(id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	m := sessiondir.Meta{ID: id, HolderPid: os.Getpid(), Pid: os.Getpid(), Command: []string{"sh", "-c", id},
		Cwd: "/tmp", Cols: 100, Rows: 30, StartedAt: time.Now().UTC(), ExitCode: exit}
	if exit != nil {
		now := time.Now().UTC()
		m.EndedAt = &now
	}
	if err := sessiondir.WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	l, err := outlog.Open(filepath.Join(dir, sessiondir.LogDir), outlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := l.Append([]byte(fmt.Sprintf("line %d of %s\r\n", i, id))); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if register {
		st := openStore(t, d)
		defer st.Close()
		if err := st.CreateSession(context.Background(), store.Session{ID: id, Command: m.Command, State: store.StateRunning}); err != nil {
			t.Fatal(err)
		}
	}
}

func openStore(t *testing.T, d statedir.Dir) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), d.DB(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func run(t *testing.T, d statedir.Dir, opts Options) Report {
	t.Helper()
	rep, err := Run(context.Background(), d, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		t.Log(f)
	}
	return rep
}

// find returns the findings of check whose subject contains subj.
func find(rep Report, check, subj string) []Finding {
	var out []Finding
	for _, f := range rep.Findings {
		if f.Check == check && f.Severity != OK && strings.Contains(f.Subject, subj) {
			out = append(out, f)
		}
	}
	return out
}

func perm(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestHealthy(t *testing.T) {
	d := newState(t)
	addSession(t, d, "s1", nil, true)
	code := 0
	addSession(t, d, "s2", &code, true)
	rep := run(t, d, Options{})
	for _, f := range rep.Findings {
		if f.Severity == Error {
			t.Errorf("a healthy directory: %v", f)
		}
	}
	if rep.Failed() {
		t.Error("Failed on a healthy directory")
	}
}

func TestPermissions(t *testing.T) {
	d := newState(t)
	addSession(t, d, "s1", nil, true)
	meta := filepath.Join(d.Session("s1"), sessiondir.MetaFile)
	os.Chmod(string(d), 0o755)
	os.Chmod(meta, 0o666)
	rep := run(t, d, Options{})
	if f := find(rep, "permissions", ""); len(f) != 2 || f[0].Subject != "." || f[0].Severity != Warn {
		t.Errorf("state dir 0755: %v", f)
	}
	if f := find(rep, "permissions", "sessions/s1/meta.json"); len(f) != 1 || f[0].Severity != Error {
		t.Errorf("meta.json 0666: %v", f)
	}
	if !rep.Failed() || perm(t, meta) != 0o666 {
		t.Fatalf("a check must report a failure and change nothing")
	}
	rep = run(t, d, Options{Repair: true})
	if rep.Failed() {
		t.Error("Failed after repair")
	}
	if m := perm(t, string(d)); m != 0o700 {
		t.Errorf("state dir %04o after repair", m)
	}
	if m := perm(t, meta); m != 0o600 {
		t.Errorf("meta.json %04o after repair", m)
	}
	if f := find(run(t, d, Options{}), "permissions", ""); len(f) != 0 {
		t.Errorf("after repair: %v", f)
	}
}

func TestOrphanSocket(t *testing.T) {
	d := newState(t)
	addSession(t, d, "s1", nil, true)
	sock := filepath.Join(d.Session("s1"), sessiondir.SocketFile)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	os.Chmod(sock, 0o600)
	rep := run(t, d, Options{})
	if f := find(rep, "sockets", "s1/holder.sock"); len(f) != 1 || f[0].Fixed {
		t.Fatalf("orphaned socket: %v", f)
	}
	if _, err := os.Lstat(sock); err != nil {
		t.Fatal("a check removed the socket")
	}
	rep = run(t, d, Options{Repair: true})
	if f := find(rep, "sockets", "s1/holder.sock"); len(f) != 1 || !f[0].Fixed {
		t.Errorf("repair: %v", f)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket still there after repair: %v", err)
	}
}

func TestTornLog(t *testing.T) {
	d := newState(t)
	addSession(t, d, "s1", nil, true)
	logDir := filepath.Join(d.Session("s1"), sessiondir.LogDir)
	segs, _ := filepath.Glob(filepath.Join(logDir, "*.seg"))
	if len(segs) == 0 {
		t.Fatal("no segment")
	}
	f, err := os.OpenFile(segs[len(segs)-1], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("\x01\x00\x00\x00\x40garbage that is no record"))
	f.Close()
	before, _ := os.Stat(segs[len(segs)-1])

	rep := run(t, d, Options{})
	got := find(rep, "logs", "s1/log")
	if len(got) != 1 || got[0].Severity != Error || !strings.Contains(got[0].Problem, "torn tail") {
		t.Fatalf("torn tail: %v", got)
	}
	if !rep.Failed() {
		t.Error("a torn tail must fail the check")
	}
	if after, _ := os.Stat(segs[len(segs)-1]); after.Size() != before.Size() {
		t.Fatal("a check changed the segment")
	}

	rep = run(t, d, Options{Repair: true})
	if got := find(rep, "logs", "s1/log"); len(got) != 1 || !got[0].Fixed || rep.Failed() {
		t.Fatalf("repair: %v (failed %v)", got, rep.Failed())
	}
	l, err := outlog.Open(logDir, outlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if n := l.Recovered(); n != 0 {
		t.Errorf("after repair, Open still recovered %d bytes", n)
	}
	if got := find(run(t, d, Options{}), "logs", ""); len(got) != 0 {
		t.Errorf("after repair: %v", got)
	}
}

func TestRegistryMismatch(t *testing.T) {
	d := newState(t)
	addSession(t, d, "both", nil, true)
	addSession(t, d, "stray", nil, false)
	st := openStore(t, d)
	if err := st.CreateSession(context.Background(), store.Session{ID: "nodir", Command: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	tmp := filepath.Join(d.Session("both"), "."+sessiondir.MetaFile+".12345")
	os.WriteFile(tmp, []byte("{"), 0o600)

	rep := run(t, d, Options{})
	if f := find(rep, "registry", "nodir"); len(f) != 1 || f[0].Severity != Error {
		t.Errorf("row without a directory: %v", f)
	}
	if f := find(rep, "registry", "stray"); len(f) != 1 || f[0].Severity != Warn {
		t.Errorf("directory without a row: %v", f)
	}
	if f := find(rep, "registry", "session both"); len(f) != 1 || !strings.Contains(f[0].Problem, "holder is gone") {
		t.Errorf("running row without a holder: %v", f)
	}
	if f := find(rep, "registry", ".meta.json.12345"); len(f) != 1 {
		t.Errorf("temp file: %v", f)
	}
	if !rep.Failed() {
		t.Error("a row without a directory must fail the check")
	}

	rep = run(t, d, Options{Repair: true, Rebuild: true})
	if rep.Failed() {
		t.Error("Failed after --repair --rebuild")
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temp file still there: %v", err)
	}
	st = openStore(t, d)
	defer st.Close()
	all, err := st.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]store.State{}
	for _, s := range all {
		states[s.ID] = s.State
	}
	want := map[string]store.State{"both": store.StateRunning, "stray": store.StateInterrupted}
	if fmt.Sprint(states) != fmt.Sprint(want) {
		t.Errorf("registry after repair: %v, want %v", states, want)
	}
}

func TestRebuildCorruptRegistry(t *testing.T) {
	d := newState(t)
	zero, three := 0, 3
	addSession(t, d, "run1", nil, true)
	addSession(t, d, "ok1", &zero, true)
	addSession(t, d, "bad1", &three, false)
	// A session of the browser listener keeps its environment policy.
	m, err := sessiondir.ReadMeta(d.Session("bad1"))
	if err != nil {
		t.Fatal(err)
	}
	m.EnvPolicy = "login"
	if err := sessiondir.WriteMeta(d.Session("bad1"), m); err != nil {
		t.Fatal(err)
	}
	// A session its holder recorded as interrupted (a shutdown) keeps the
	// reason the holder gave.
	addSession(t, d, "stop1", nil, false)
	m, _ = sessiondir.ReadMeta(d.Session("stop1"))
	now := time.Now().UTC()
	m.EndedAt, m.Interrupted, m.Reason = &now, true, "stopped by SIGTERM: the machine or service stopping"
	if err := sessiondir.WriteMeta(d.Session("stop1"), m); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(d.DB(), []byte(strings.Repeat("this is not a database ", 400)), 0o600)
	os.Remove(d.DB() + "-wal")
	os.Remove(d.DB() + "-shm")

	rep := run(t, d, Options{})
	if f := find(rep, "registry", "termkeep.db"); len(f) != 1 || f[0].Severity != Error {
		t.Fatalf("corrupt registry: %v", f)
	}
	if !rep.Failed() {
		t.Error("a corrupt registry must fail the check")
	}
	if _, err := Run(context.Background(), d, Options{Repair: true}); err != nil {
		t.Fatal(err)
	}

	rep = run(t, d, Options{Rebuild: true})
	if rep.Failed() || !rep.Rebuilt || rep.Recovered != 4 {
		t.Fatalf("rebuild: failed %v, rebuilt %v, recovered %d", rep.Failed(), rep.Rebuilt, rep.Recovered)
	}
	if aside, _ := filepath.Glob(d.DB() + ".broken-*"); len(aside) != 1 {
		t.Errorf("moved-aside registry: %v", aside)
	}
	got := registryRows(t, d, func(s store.Session, code string) string {
		row := fmt.Sprintf("%s %s %v %dx%d %q", s.State, code, s.Command, s.Cols, s.Rows, s.EnvPolicy)
		if s.ID == "stop1" {
			row += " " + s.Reason
		}
		return row
	})
	want := map[string]string{
		"run1":  `interrupted - [sh -c run1] 100x30 ""`,
		"ok1":   `exited 0 [sh -c ok1] 100x30 ""`,
		"bad1":  `exited 3 [sh -c bad1] 100x30 "login"`,
		"stop1": `interrupted - [sh -c stop1] 100x30 "" stopped by SIGTERM: the machine or service stopping`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rebuilt registry:\n got %v\nwant %v", got, want)
	}
}

// A server holding the lock refuses repairs and leaves checks read-only.
func TestServerRunning(t *testing.T) {
	d := newState(t)
	addSession(t, d, "s1", nil, true)
	os.Chmod(string(d), 0o755)
	lock, err := os.OpenFile(d.ServerLock(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(lock, "%d\n", 4242)

	_, err = Run(context.Background(), d, Options{Repair: true})
	var sre *ServerRunningError
	if !errors.As(err, &sre) || sre.Pid != 4242 ||
		err.Error() != "a server is running (pid 4242): stop it first (termkeep shutdown)" {
		t.Fatalf("repair beside a server: %v", err)
	}
	rep := run(t, d, Options{})
	if !rep.ReadOnly || rep.ServerPid != 4242 {
		t.Errorf("check beside a server: read-only %v, pid %d", rep.ReadOnly, rep.ServerPid)
	}
	if m := perm(t, string(d)); m != 0o755 {
		t.Errorf("a read-only check changed the mode to %04o", m)
	}
}

// A registry put back to an older copy of itself (as a lost WAL leaves
// it): doctor reports the rollback as an error with --rebuild, and the
// check alone leaves it for the server to find; --rebuild adopts the
// session the registry lost with its settings, makes its workspace again
// from the copy beside the registry with its own settings, and ends the
// report.
func TestRolledBackRegistry(t *testing.T) {
	ctx := context.Background()
	d := newState(t)
	older, err := os.ReadFile(d.DB())
	if err != nil {
		t.Fatal(err)
	}
	exit := 0
	addSession(t, d, "lost", &exit, true)
	m, err := sessiondir.ReadMeta(d.Session("lost"))
	if err != nil {
		t.Fatal(err)
	}
	m.Workspace = "proj"
	m.Settings = sessiondir.Settings{AutoRestore: true, RestoreCommand: "make resume"}
	if err := sessiondir.WriteMeta(d.Session("lost"), m); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, d)
	if err := st.CreateWorkspace(ctx, store.Workspace{Name: "proj", Dir: "/src/proj", AutoRestore: true}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, sfx := range []string{"-wal", "-shm"} {
		os.Remove(d.DB() + sfx)
	}
	if err := os.WriteFile(d.DB(), older, 0o600); err != nil {
		t.Fatal(err)
	}

	for range 2 { // a check changes nothing: the second finds the same
		rep := run(t, d, Options{})
		f := find(rep, "registry", "termkeep.db")
		if len(f) != 1 || f[0].Severity != Error || f[0].Flag != "--rebuild" || !strings.Contains(f[0].Problem, "rolled back from generation 2 to 0") {
			t.Fatalf("the rollback's finding: %v", f)
		}
		if !rep.Failed() {
			t.Fatal("a rollback must fail the check")
		}
	}
	st = openStore(t, d)
	if g := st.Generation(); g.Rollback == nil || !g.New {
		t.Errorf("after doctor's checks the server finds %+v, want the rollback new to it", g)
	}
	st.Close()

	rep := run(t, d, Options{Rebuild: true})
	if f := find(rep, "registry", "termkeep.db"); len(f) != 1 || !f[0].Fixed {
		t.Fatalf("the rollback after --rebuild: %v", f)
	}
	if rep.Failed() {
		t.Error("Failed after --rebuild")
	}
	st = openStore(t, d)
	defer st.Close()
	if g := st.Generation(); g.Rollback != nil {
		t.Errorf("after --rebuild: %+v, want no rollback", g)
	}
	sess, err := st.Session(ctx, "lost")
	if err != nil || !sess.AutoRestore || sess.RestoreCommand != "make resume" || sess.Workspace != "proj" || sess.State != store.StateExited {
		t.Errorf("the lost session after --rebuild: %+v (%v)", sess, err)
	}
	if w, err := st.Workspace(ctx, "proj"); err != nil || w.Dir != "/src/proj" || !w.AutoRestore {
		t.Errorf("the lost workspace after --rebuild: %+v (%v), want /src/proj with auto-restore", w, err)
	}
}

// A rebuilt (or adopting) registry has the end a holder could record only in its status
// record (meta.json refused on a full disk), and the child's exit a holder
// recorded before it died while lingering: both exited, never interrupted
// (which a restore would run again). Another run's status record is not
// taken for this one's.
func TestRebuildReadsTheStatusRecord(t *testing.T) {
	d := newState(t)
	seven := 7
	for _, id := range []string{"full1", "linger1", "other1"} {
		addSession(t, d, id, nil, false)
	}
	m, _ := sessiondir.ReadMeta(d.Session("full1"))
	ended := m
	now := time.Now().UTC()
	ended.EndedAt, ended.ExitCode, ended.End = &now, &seven, 99
	if w, err := sessiondir.CreateStatus(d.Session("full1"), sessiondir.StatusOf(ended), nil); err != nil {
		t.Fatal(err)
	} else {
		w.Close()
	}
	m, _ = sessiondir.ReadMeta(d.Session("linger1"))
	m.Child = &sessiondir.ChildExit{At: now, ExitCode: 5}
	if err := sessiondir.WriteMeta(d.Session("linger1"), m); err != nil {
		t.Fatal(err)
	}
	m, _ = sessiondir.ReadMeta(d.Session("other1"))
	m.StartedAt = m.StartedAt.Add(-time.Hour)
	m.EndedAt, m.ExitCode = &now, &seven
	if w, err := sessiondir.CreateStatus(d.Session("other1"), sessiondir.StatusOf(m), nil); err != nil {
		t.Fatal(err)
	} else {
		w.Close()
	}

	// The registry has none of them: --rebuild adopts each from its
	// directory, as it does after a rebuild from nothing.
	if rep := run(t, d, Options{Rebuild: true}); rep.Failed() {
		t.Fatal("rebuild failed")
	}
	got := registryRows(t, d, func(s store.Session, code string) string { return fmt.Sprintf("%s %s", s.State, code) })
	want := map[string]string{"full1": "exited 7", "linger1": "exited 5", "other1": "interrupted -"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rebuilt registry:\n got %v\nwant %v", got, want)
	}
}

// registryRows is the registry's sessions by id, each as row says, given
// the session and its exit code ("-": none).
func registryRows(t *testing.T, d statedir.Dir, row func(s store.Session, code string) string) map[string]string {
	t.Helper()
	st := openStore(t, d)
	defer st.Close()
	all, err := st.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range all {
		code := "-"
		if s.ExitCode != nil {
			code = fmt.Sprint(*s.ExitCode)
		}
		got[s.ID] = row(s, code)
	}
	return got
}

// A directory the registry lacks whose meta.json is damaged is adopted
// from what the directory still tells, with what is lost named: the
// ended one with its exit status from its status record, the other as
// interrupted. Before, doctor said it "cannot be adopted" and --rebuild
// left it out.
func TestRebuildSalvagesDamagedMeta(t *testing.T) {
	d := newState(t)
	seven := 7
	for _, id := range []string{"ended1", "gone1", "nolog1"} {
		addSession(t, d, id, nil, false)
	}
	m, _ := sessiondir.ReadMeta(d.Session("ended1"))
	now := time.Now().UTC()
	m.EndedAt, m.ExitCode = &now, &seven
	if w, err := sessiondir.CreateStatus(d.Session("ended1"), sessiondir.StatusOf(m), nil); err != nil {
		t.Fatal(err)
	} else {
		w.Close()
	}
	for _, id := range []string{"ended1", "gone1", "nolog1"} {
		p := filepath.Join(d.Session(id), sessiondir.MetaFile)
		b, _ := os.ReadFile(p)
		b[bytes.Index(b, []byte(`"command"`))+3] = 0
		os.WriteFile(p, b, 0o600)
	}
	os.RemoveAll(filepath.Join(d.Session("nolog1"), sessiondir.LogDir))

	rep := run(t, d, Options{})
	for _, id := range []string{"ended1", "gone1"} {
		if f := find(rep, "registry", "session "+id); len(f) != 1 || f[0].Flag != "--rebuild" || !strings.Contains(f[0].Fix, "unknown: command, cwd, name, workspace, settings") {
			t.Errorf("%s: %v, want a fix by --rebuild naming what is unknown", id, f)
		}
	}
	if f := find(rep, "registry", "session nolog1"); len(f) != 1 || !strings.Contains(f[0].Problem, "cannot be adopted") {
		t.Errorf("nolog1 (neither status record nor log): %v", f)
	}
	run(t, d, Options{Rebuild: true})
	got := registryRows(t, d, func(s store.Session, code string) string {
		return fmt.Sprintf("%s %s %q %q", s.State, code, s.Command, s.Reason)
	})
	why := sessiondir.SalvagedReason([]string{"command", "cwd", "name", "workspace", "settings"})
	pid := os.Getpid()
	want := map[string]string{
		"ended1": fmt.Sprintf("exited 7 [] %q", why),
		"gone1":  fmt.Sprintf("interrupted - [] %q", fmt.Sprintf("holder pid %d is gone (found by termkeep doctor); %s", pid, why)),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rebuilt registry:\n got %v\nwant %v", got, want)
	}
}
