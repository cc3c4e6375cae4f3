package holder

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/testproc"
	"termkeep/internal/wire"
)

// TestMain lets the test binary be a real holder process: run with
// "__holder" as its first argument (which IsHolder recognises), it is
// one, as termkeep's hidden holder mode is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "__holder" {
		os.Exit(Main())
	}
	// Holders are in sessions of their own: testproc ends those a killed
	// test binary leaves.
	os.Exit(testproc.Run(m))
}

// spawnHolder starts a real holder process (this test binary) running
// script under bash, and waits for the script to print "ready". A
// connected test server follows it from the first byte; the stream is
// what it has read.
func spawnHolder(t *testing.T, script string) (*Process, *testHolder, *server, *stream) {
	t.Helper()
	dir, err := os.MkdirTemp("", "tkh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Spawn([]string{self, "__holder"}, Spec{
		ID: "t1", Dir: dir, Cols: 80, Rows: 24, Cwd: dir,
		Command: []string{"bash", "--noprofile", "--norc", "-c", "stty raw -echo; " + script},
		Env:     []string{"PATH=" + os.Getenv("PATH"), "TERM=dumb", "LC_ALL=C", "D=" + dir},
	}, wait)
	if err != nil {
		t.Fatal(err)
	}
	reaped := p.Reaped()
	t.Cleanup(func() {
		syscall.Kill(p.HolderPid, syscall.SIGKILL)
		syscall.Kill(-p.Pid, syscall.SIGKILL)
		<-reaped
	})
	th := &testHolder{t: t, dir: dir, done: reaped}
	s, _ := th.connect(0)
	st := &stream{}
	s.readTo(st, len64("ready"))
	return p, th, s, st
}

// A holder stopped by SIGTERM (a shutdown, a service stop: anyone but
// termkeep) records "interrupted", not "closed": it hangs the child up
// (a shell saves its history), logs its last output, and writes
// meta.json; a child that died of the same stop just before is
// interrupted too. termkeep's own close (CloseSignal) is "closed".
func TestStopBySIGTERM(t *testing.T) {
	// hup: a child that says it got SIGHUP, then exits as bash does.
	const hup = `trap 'printf hup; echo hup > "$D/hup"; exit 129' HUP; printf ready; while :; do sleep 0.05; done`
	for _, tc := range []struct {
		name   string
		script string
		signal func(p *Process)
		state  string
		reason string // what the reason says
		hup    bool   // the child got SIGHUP and printed "hup"
	}{
		{"SIGTERM to the holder", hup, func(p *Process) {
			syscall.Kill(p.HolderPid, syscall.SIGTERM)
		}, "interrupted", "stopped by SIGTERM: the machine or service stopping", true},
		{"SIGTERM to the holder and the child at once", `printf ready; exec sleep 600`, func(p *Process) {
			syscall.Kill(p.Pid, syscall.SIGTERM)
			syscall.Kill(p.HolderPid, syscall.SIGTERM)
		}, "interrupted", "stopped by SIGTERM", false},
		{"the child's SIGKILL 0.5 s before the holder's SIGTERM", `printf ready; exec sleep 600`, func(p *Process) {
			syscall.Kill(p.Pid, syscall.SIGKILL)
			time.Sleep(500 * time.Millisecond)
			syscall.Kill(p.HolderPid, syscall.SIGTERM)
		}, "interrupted", "its process had died of SIGKILL", false},
		{"termkeep's close signal", hup, func(p *Process) {
			syscall.Kill(p.HolderPid, CloseSignal)
		}, "closed", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, th, s, st := spawnHolder(t, tc.script)
			tc.signal(p)
			s.readTo(st, 1<<62)
			if st.exit == nil || st.exit.State != tc.state || !strings.Contains(st.exit.Reason, tc.reason) {
				t.Fatalf("exit %+v, want %s with a reason saying %q", st.exit, tc.state, tc.reason)
			}
			if tc.hup != strings.HasSuffix(string(st.data), "hup") {
				t.Fatalf("the child printed %q; got SIGHUP: want %v", st.data, tc.hup)
			}
			m, err := th.endedMeta()
			if err != nil || m.EndedAt == nil || m.State() != tc.state || m.Reason != st.exit.Reason || m.End != st.end() {
				t.Fatalf("meta.json %+v (%v), want the Exit frame's end: %+v at %d", m, err, st.exit, st.end())
			}
			if tc.state == "interrupted" && (m.ExitCode != nil || st.exit.ExitCode != nil) {
				t.Fatalf("an interrupted session has no exit status; meta.json has %v, the Exit frame %v", m.ExitCode, st.exit.ExitCode)
			}
			if _, err := os.Stat(filepath.Join(th.dir, "hup")); (err == nil) != tc.hup {
				t.Fatalf("the child's SIGHUP trap ran: %v, want %v", err == nil, tc.hup)
			}
		})
	}
}

// A holder of an earlier protocol closes on SIGTERM and ignores
// CloseSignal: the server asks each the way it understands.
func TestCloseSignalFor(t *testing.T) {
	for _, tc := range []struct {
		version int
		want    syscall.Signal
	}{
		{0, syscall.SIGTERM}, {1, syscall.SIGTERM}, {2, syscall.SIGTERM},
		{3, CloseSignal}, {wire.Version, CloseSignal}, {wire.Version + 1, CloseSignal},
	} {
		if got := CloseSignalFor(tc.version); got != tc.want {
			t.Errorf("CloseSignalFor(%d) = %v, want %v", tc.version, got, tc.want)
		}
	}
}
