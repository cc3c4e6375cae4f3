package service

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeRunner plays systemctl and loginctl: it records every command and
// answers from its state, as a user manager and logind would.
type fakeRunner struct {
	calls    []string
	noBus    bool // no user manager: every systemctl fails as in a container
	loaded   bool
	enabled  bool
	active   bool
	pid      int
	linger   string // "yes", "no" or "" (logind unreachable)
	lingerOK bool   // enable-linger is allowed
	fail     string // a command that fails
}

func (f *fakeRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	cmd := strings.Join(append([]string{name}, args...), " ")
	f.calls = append(f.calls, cmd)
	if f.fail != "" && strings.HasPrefix(cmd, f.fail) {
		return []byte("Job failed. See journalctl --user -xe for details.\n"), errors.New("exit status 1")
	}
	if name == "loginctl" {
		switch args[0] {
		case "show-user":
			if f.linger == "" {
				return []byte("Failed to connect to bus: Host is down\n"), errors.New("exit status 1")
			}
			return []byte(f.linger + "\n"), nil
		case "enable-linger":
			if !f.lingerOK {
				return []byte("Could not enable linger: Access denied\n"), errors.New("exit status 1")
			}
			f.linger = "yes"
			return nil, nil
		}
	}
	if f.noBus {
		return []byte("Failed to connect to bus: No medium found\n"), errors.New("exit status 1")
	}
	switch args[1] {
	case "show":
		var b strings.Builder
		state := map[bool]string{true: "active", false: "inactive"}[f.active]
		load := map[bool]string{true: "loaded", false: "not-found"}[f.loaded]
		file := map[bool]string{true: "enabled", false: "disabled"}[f.enabled]
		b.WriteString("LoadState=" + load + "\nActiveState=" + state + "\nUnitFileState=" + file + "\n")
		if f.active {
			b.WriteString("MainPID=" + strconv.Itoa(f.pid) + "\nExecMainStartTimestamp=Thu 2026-11-26 10:00:00 UTC\n")
		} else {
			b.WriteString("MainPID=0\n")
		}
		return []byte(b.String()), nil
	case "daemon-reload":
		f.loaded = true
	case "enable":
		f.enabled = true
	case "start":
		f.active, f.pid = true, f.pid+1
	case "restart":
		f.active, f.pid = true, f.pid+1
	case "disable":
		f.enabled = false
		if slices.Contains(args, "--now") {
			f.active = false
		}
	}
	return nil, nil
}

// mutations are the calls that change something.
func (f *fakeRunner) mutations() []string {
	var out []string
	for _, c := range f.calls {
		if !strings.Contains(c, " show") {
			out = append(out, c)
		}
	}
	return out
}

func newSystemd(t *testing.T, f *fakeRunner, same bool) (*Systemd, Spec, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	var out bytes.Buffer
	m := &Systemd{
		Run: f, UnitDir: filepath.Join(dir, "systemd", "user"), User: "ann", Out: &out,
		SameFile: func(pid int, path string) bool { return same },
	}
	s := Spec{Binary: "/opt/tk/termkeep", StateDir: filepath.Join(dir, "state"), EnvFile: filepath.Join(dir, "termkeep", "service.env"),
		Env: []Var{{"PATH", "/opt/tk:/usr/bin"}, {"LANG", "C.UTF-8"}}}
	return m, s, &out
}

func TestSystemdInstallFresh(t *testing.T) {
	f := &fakeRunner{linger: "no", lingerOK: true}
	m, s, out := newSystemd(t, f, false)
	if err := m.Install(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"systemctl --user daemon-reload", "systemctl --user enable termkeep.service", "systemctl --user start termkeep.service",
		"loginctl enable-linger ann",
	}
	if got := f.mutations(); !slices.Equal(got, want) {
		t.Fatalf("commands %q, want %q", got, want)
	}
	unit, err := os.ReadFile(filepath.Join(m.UnitDir, UnitName))
	if err != nil || !bytes.Equal(unit, Unit(s)) {
		t.Fatalf("the unit on disk: %v\n%s", err, unit)
	}
	st, err := os.Stat(s.EnvFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the environment file: %v, %v; want mode 0600", err, st)
	}
	env, _ := os.ReadFile(s.EnvFile)
	if vars, err := ParseEnvFile(env); err != nil || !slices.Equal(vars, s.Env) {
		t.Fatalf("the environment file holds %q, %v; want %q", vars, err, s.Env)
	}
	for _, w := range []string{"wrote " + s.EnvFile + " (PATH, LANG)", "wrote " + filepath.Join(m.UnitDir, UnitName), "started", "pid 1", "linger on"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("the output lacks %q:\n%s", w, out)
		}
	}
}

// installed is a service installed once, its commands and output since
// then recorded afresh.
func installed(t *testing.T) (*Systemd, Spec, *fakeRunner, *bytes.Buffer) {
	t.Helper()
	f := &fakeRunner{linger: "yes"}
	m, s, _ := newSystemd(t, f, true)
	if err := m.Install(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	f.calls = nil
	var out bytes.Buffer
	m.Out = &out
	return m, s, f, &out
}

func TestSystemdInstallAgain(t *testing.T) {
	m, s, f, out := installed(t)
	if err := m.Install(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := f.mutations(); len(got) != 0 || !strings.Contains(out.String(), "nothing to change") {
		t.Fatalf("an install of the same: commands %q, output:\n%s", got, out.String())
	}

	// A new build at the same path: the server alone restarts.
	m.SameFile = func(int, string) bool { return false }
	f.calls = nil
	out.Reset()
	if err := m.Install(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := f.mutations(); !slices.Equal(got, []string{"systemctl --user restart termkeep.service"}) {
		t.Fatalf("an upgrade ran %q; want a restart alone", got)
	}
	if !strings.Contains(out.String(), "restarted the server (pid 1, now pid 2); sessions keep running") {
		t.Fatalf("the output:\n%s", out.String())
	}
}

// With no user manager (a container, an SSH login without one), the
// files are written and the output says what to run; no error.
func TestSystemdInstallWithoutManager(t *testing.T) {
	f := &fakeRunner{noBus: true, linger: "", lingerOK: false}
	m, s, out := newSystemd(t, f, false)
	if err := m.Install(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(m.UnitDir, UnitName)); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"no systemd user manager answered (Failed to connect to bus: No medium found)",
		"systemctl --user daemon-reload && systemctl --user enable --now termkeep.service",
		"could not turn linger on (Could not enable linger: Access denied)", "sudo loginctl enable-linger ann",
	} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("the output lacks %q:\n%s", w, out)
		}
	}
}

func TestSystemdInstallStartFails(t *testing.T) {
	f := &fakeRunner{linger: "yes", fail: "systemctl --user start"}
	m, s, _ := newSystemd(t, f, false)
	err := m.Install(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "journalctl --user -u termkeep") || !strings.Contains(err.Error(), "Job failed") {
		t.Fatalf("Install = %v; want the failure and where to look", err)
	}
}

func TestSystemdUninstall(t *testing.T) {
	m, s, f, out := installed(t)
	if err := m.Uninstall(context.Background(), s.EnvFile); err != nil {
		t.Fatal(err)
	}
	want := []string{"systemctl --user disable --now termkeep.service", "systemctl --user daemon-reload"}
	if got := f.mutations(); !slices.Equal(got, want) {
		t.Fatalf("commands %q, want %q", got, want)
	}
	for _, p := range []string{filepath.Join(m.UnitDir, UnitName), s.EnvFile} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	for _, w := range []string{"sessions keep running", "loginctl disable-linger ann"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("the output lacks %q:\n%s", w, out.String())
		}
	}
	// Again: nothing to remove, said so, no error.
	out.Reset()
	if err := m.Uninstall(context.Background(), s.EnvFile); err != nil || !strings.Contains(out.String(), "not installed") {
		t.Fatalf("a second uninstall: %v\n%s", err, out.String())
	}
}

func TestSystemdStatus(t *testing.T) {
	f := &fakeRunner{linger: "no", lingerOK: false}
	m, s, _ := newSystemd(t, f, true)
	st := m.Status(context.Background(), s.EnvFile)
	if st.Installed {
		t.Fatalf("installed before install: %+v", st)
	}
	f.linger = "yes"
	if err := m.Install(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	st = m.Status(context.Background(), s.EnvFile)
	if !st.Installed || !st.Show.Active() || st.Binary != s.Binary || st.Linger != LingerOn || !slices.Equal(st.EnvVars, []string{"PATH", "LANG"}) || st.Stale {
		t.Fatalf("status after install: %+v", st)
	}
}

func TestStatusFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   Status
		want []string
	}{
		{"running", Status{UnitPath: "/u/termkeep.service", Installed: true, Manager: true, Binary: "/b/termkeep", EnvFile: "/e", EnvVars: []string{"PATH", "LANG"}, Linger: LingerOn, User: "ann",
			Show: Show{LoadState: "loaded", ActiveState: "active", SubState: "running", UnitFileState: "enabled", MainPID: 9, Since: "Thu 10:00"}},
			[]string{"unit:        /u/termkeep.service (installed, enabled)", "server:      active (running), pid 9, since Thu 10:00", "binary:      /b/termkeep", "environment: /e (PATH, LANG)", "linger:      on"}},
		{"not installed", Status{UnitPath: "/u/termkeep.service", Manager: true, Linger: LingerOff, User: "ann"},
			[]string{"not installed: termkeep service install", "linger:      off", "loginctl enable-linger ann"}},
		{"older binary runs", Status{UnitPath: "/u", Installed: true, Manager: true, Binary: "/b", Stale: true, Show: Show{ActiveState: "active", MainPID: 3}},
			[]string{"the server (pid 3) runs an older build: termkeep service install restarts it"}},
		{"no manager", Status{UnitPath: "/u", Installed: true, ManagerErr: "Failed to connect to bus", Binary: "/b"},
			[]string{"server:      unknown: no systemd user manager answered (Failed to connect to bus)"}},
		{"bad env file", Status{UnitPath: "/u", Installed: true, Manager: true, EnvFile: "/e", EnvErr: "line 2: no = in \"x\""},
			[]string{"environment: /e: line 2: no = in \"x\""}},
	} {
		var b bytes.Buffer
		tc.st.Format(&b)
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: the status lacks %q:\n%s", tc.name, w, b.String())
			}
		}
	}
}

// fakeServer is the termkeep server on the state directory.
type fakeServer struct {
	pid     func() int
	stopped []int
}

func (s *fakeServer) Pid(context.Context) int { return s.pid() }
func (s *fakeServer) Stop(context.Context) error {
	s.stopped = append(s.stopped, s.pid())
	return nil
}

// A server the CLI started before the service holds the state
// directory: install stops it (its sessions run on) before it starts the
// unit's, which would otherwise fail on the directory's lock, and then
// waits for the unit's server to answer.
func TestSystemdInstallStopsAServerOutside(t *testing.T) {
	f := &fakeRunner{linger: "yes"}
	m, s, out := newSystemd(t, f, false)
	stray := true
	srv := &fakeServer{pid: func() int {
		if stray {
			return 99
		}
		if f.active {
			return f.pid
		}
		return 0
	}}
	m.Server = stopper{srv, func() { stray = false }}
	if err := m.Install(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(srv.stopped, []int{99}) {
		t.Fatalf("stopped %v; want the server outside (99)", srv.stopped)
	}
	for _, w := range []string{"stopped the termkeep server that ran outside the service (pid 99); sessions keep running", "started the server (pid 1)", "it answers"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("the output lacks %q:\n%s", w, out.String())
		}
	}
}

// stopper is a fakeServer whose Stop also runs then.
type stopper struct {
	*fakeServer
	then func()
}

func (s stopper) Stop(ctx context.Context) error {
	err := s.fakeServer.Stop(ctx)
	s.then()
	return err
}

func TestSystemdInstallServerNeverAnswers(t *testing.T) {
	f := &fakeRunner{linger: "yes"}
	m, s, _ := newSystemd(t, f, false)
	m.Server = &fakeServer{pid: func() int { return 0 }}
	m.Wait = 50 * time.Millisecond
	err := m.Install(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "does not answer") || !strings.Contains(err.Error(), "journalctl --user -u termkeep") {
		t.Fatalf("Install = %v; want an error that says where to look", err)
	}
}
