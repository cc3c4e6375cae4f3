package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeLaunchctl plays launchctl for one agent.
type fakeLaunchctl struct {
	calls  []string
	loaded bool
	pid    int
}

func (f *fakeLaunchctl) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	f.calls = append(f.calls, strings.Join(append([]string{name}, args...), " "))
	switch args[0] {
	case "print":
		if !f.loaded {
			return []byte("Could not find service \"termkeep\" in domain for port\n"), errors.New("exit status 113")
		}
		return []byte(fmt.Sprintf("gui/501/termkeep = {\n\tstate = running\n\tprogram = /opt/tk/termkeep\n\tpid = %d\n}\n", f.pid)), nil
	case "bootstrap", "kickstart":
		f.loaded, f.pid = true, f.pid+1
	case "bootout":
		if !f.loaded {
			return []byte("Boot-out failed: 3: No such process\n"), errors.New("exit status 3")
		}
		f.loaded = false
	}
	return nil, nil
}

func (f *fakeLaunchctl) mutations() []string {
	return slices.DeleteFunc(slices.Clone(f.calls), func(c string) bool { return strings.HasPrefix(c, "launchctl print") })
}

func TestLaunchAgent(t *testing.T) {
	dir := t.TempDir()
	f := &fakeLaunchctl{}
	var out bytes.Buffer
	m := &LaunchAgent{Run: f, AgentDir: filepath.Join(dir, "LaunchAgents"), UID: 501, Out: &out}
	s := Spec{Binary: "/opt/tk/termkeep", StateDir: filepath.Join(dir, "state"), LogFile: filepath.Join(dir, "Logs", "termkeep", "server.log"),
		Env: []Var{{"PATH", "/opt/tk:/usr/bin"}}}
	plist := filepath.Join(m.AgentDir, "termkeep.plist")
	ctx := context.Background()

	if st := m.Status(ctx); st.Installed {
		t.Fatalf("installed before install: %+v", st)
	}
	if err := m.Install(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got, want := f.mutations(), []string{"launchctl bootstrap gui/501 " + plist}; !slices.Equal(got, want) {
		t.Fatalf("a first install ran %q, want %q", got, want)
	}
	if b, err := os.ReadFile(plist); err != nil || !bytes.Equal(b, Plist(s)) {
		t.Fatalf("the agent on disk: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Dir(s.LogFile)); err != nil {
		t.Fatalf("the log's directory: %v", err)
	}
	st := m.Status(ctx)
	if !st.Installed || st.Agent.PID != 1 || st.Binary != s.Binary {
		t.Fatalf("status after install: %+v", st)
	}
	var sb bytes.Buffer
	st.Format(&sb)
	for _, w := range []string{"agent:       " + plist + " (installed, loaded)", "server:      running, pid 1", "binary:      /opt/tk/termkeep", "macOS has no linger"} {
		if !strings.Contains(sb.String(), w) {
			t.Errorf("the status lacks %q:\n%s", w, sb.String())
		}
	}

	// Again, the same agent: the server alone restarts (a new build).
	f.calls, out = nil, bytes.Buffer{}
	if err := m.Install(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got, want := f.mutations(), []string{"launchctl kickstart -k gui/501/termkeep"}; !slices.Equal(got, want) {
		t.Fatalf("a second install ran %q, want %q", got, want)
	}
	if !strings.Contains(out.String(), "restarted the server (pid 1, now pid 2); sessions keep running") {
		t.Fatalf("the output:\n%s", out.String())
	}

	// A changed agent is loaded again.
	s.Args = []string{"--listen", "off"}
	f.calls = nil
	if err := m.Install(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got, want := f.mutations(), []string{"launchctl bootout gui/501/termkeep", "launchctl bootstrap gui/501 " + plist}; !slices.Equal(got, want) {
		t.Fatalf("an install of a changed agent ran %q, want %q", got, want)
	}

	f.calls, out = nil, bytes.Buffer{}
	if err := m.Uninstall(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := f.mutations(), []string{"launchctl bootout gui/501/termkeep"}; !slices.Equal(got, want) {
		t.Fatalf("uninstall ran %q, want %q", got, want)
	}
	if _, err := os.Stat(plist); !os.IsNotExist(err) {
		t.Fatalf("the agent is still there: %v", err)
	}
	if !strings.Contains(out.String(), "sessions keep running") {
		t.Fatalf("the output:\n%s", out.String())
	}
}
