package service

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestServesDir(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"/bin/termkeep", "serve", "--state-dir", "/s/tk"}, true},
		{[]string{"/bin/termkeep", "serve", "--state-dir", "/s/tk/"}, true},
		{[]string{"/bin/termkeep", "serve", "--listen", "off", "--state-dir=/s/./tk"}, true},
		{[]string{"/bin/termkeep", "serve", "--state-dir", "/s/other"}, false},
		{[]string{"/bin/termkeep", "serve"}, false},                               // no directory named: never guess
		{[]string{"/bin/termkeep", "serve", "--state-dir"}, false},                // no value
		{[]string{"/bin/termkeep", "attach", "--state-dir", "/s/tk"}, false},      // not a server
		{[]string{"/bin/termkeep", "serve", "--", "--state-dir", "/s/tk"}, false}, // past the flags
		{nil, false},
	} {
		if got := servesDir(tc.argv, "/s/tk"); got != tc.want {
			t.Errorf("servesDir(%q) = %v, want %v", tc.argv, got, tc.want)
		}
	}
}

// The CLI starts the server through the service only when the installed
// unit or agent runs the server of its own state directory.
func TestStarter(t *testing.T) {
	ctx := context.Background()
	f := &fakeRunner{loaded: true}
	m, s, _ := newSystemd(t, f, true)
	if m.Starter(s.StateDir) != nil {
		t.Fatal("a Starter without an installed unit")
	}
	if err := os.MkdirAll(m.UnitDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(m.unitPath(), Unit(s), 0o600); err != nil {
		t.Fatal(err)
	}
	if m.Starter(filepath.Join(s.StateDir, "other")) != nil {
		t.Error("a Starter for a state directory the unit does not serve")
	}
	start := m.Starter(s.StateDir)
	if start == nil {
		t.Fatal("no Starter for the unit's own state directory")
	}
	if err := start(ctx); err != nil || !slices.Contains(f.calls, "systemctl --user start termkeep.service") {
		t.Errorf("start = %v; calls %q", err, f.calls)
	}
	f.noBus = true
	if err := start(ctx); err == nil || err.Error() != "systemctl --user start termkeep.service: Failed to connect to bus: No medium found" {
		t.Errorf("start without a user manager = %v", err)
	}

	dir := t.TempDir()
	lf := &fakeLaunchctl{loaded: true}
	la := &LaunchAgent{Run: lf, AgentDir: filepath.Join(dir, "LaunchAgents"), UID: 501, Out: &bytes.Buffer{}}
	ls := Spec{Binary: "/opt/tk/termkeep", StateDir: filepath.Join(dir, "state"), Args: []string{"--listen", "off"}}
	if la.Starter(ls.StateDir) != nil {
		t.Fatal("a launchd Starter without an agent")
	}
	if err := os.MkdirAll(la.AgentDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(la.plistPath(), Plist(ls), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := plistArgs(Plist(ls)); !slices.Equal(got, ls.argv()) {
		t.Errorf("plistArgs = %q, want %q", got, ls.argv())
	}
	start = la.Starter(ls.StateDir)
	if start == nil || la.Starter(dir) != nil {
		t.Fatal("the launchd Starter does not follow the agent's state directory")
	}
	if err := start(ctx); err != nil || !slices.Contains(lf.calls, "launchctl kickstart gui/501/termkeep") {
		t.Errorf("start = %v; calls %q", err, lf.calls)
	}
}
