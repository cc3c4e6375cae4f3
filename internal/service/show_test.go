package service

import (
	"testing"
)

func TestParseShow(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Show
	}{
		{"running", "LoadState=loaded\nActiveState=active\nSubState=running\nUnitFileState=enabled\nMainPID=4242\nFragmentPath=/home/a/.config/systemd/user/termkeep.service\nExecMainStartTimestamp=Thu 2026-11-26 10:00:00 UTC\n",
			Show{LoadState: "loaded", ActiveState: "active", SubState: "running", UnitFileState: "enabled", MainPID: 4242,
				FragmentPath: "/home/a/.config/systemd/user/termkeep.service", Since: "Thu 2026-11-26 10:00:00 UTC"}},
		{"not found", "LoadState=not-found\nActiveState=inactive\nMainPID=0\nUnitFileState=\n", Show{LoadState: "not-found", ActiveState: "inactive"}},
		{"crlf and junk", "LoadState=loaded\r\nno equals\n=x\nMainPID=-3\nMainPID=abc\nActiveState=failed", Show{LoadState: "loaded", ActiveState: "failed"}},
		{"huge pid", "MainPID=99999999999999999999", Show{}},
		{"value with =", "FragmentPath=/a=b", Show{FragmentPath: "/a=b"}},
		{"empty", "", Show{}},
	} {
		if got := ParseShow([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: ParseShow = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestParseLaunchctlPrint(t *testing.T) {
	out := `gui/501/termkeep = {
	active count = 1
	path = /Users/ann/Library/LaunchAgents/termkeep.plist
	state = running

	program = /Users/ann/.local/bin/termkeep
	arguments = {
		/Users/ann/.local/bin/termkeep
		serve
		state = not this one
	}

	pid = 812
	last exit code = (never exited)
}
`
	want := Launchd{Loaded: true, State: "running", PID: 812, Program: "/Users/ann/.local/bin/termkeep", Path: "/Users/ann/Library/LaunchAgents/termkeep.plist"}
	if got := ParseLaunchctlPrint([]byte(out)); got != want {
		t.Fatalf("ParseLaunchctlPrint = %+v, want %+v", got, want)
	}
	for _, in := range []string{"", "Could not find service \"termkeep\" in domain for port", "}}}{{{", "gui/501/termkeep = {\n\tpid = x\n"} {
		if got := ParseLaunchctlPrint([]byte(in)); got.PID != 0 || got.State != "" {
			t.Errorf("ParseLaunchctlPrint(%q) = %+v, want nothing", in, got)
		}
	}
}

func FuzzParseShow(f *testing.F) {
	f.Add([]byte("LoadState=loaded\nMainPID=12\n"))
	f.Add([]byte("gui/501/termkeep = {\n\tpid = 3\n\tstate = running\n}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := ParseShow(b)
		l := ParseLaunchctlPrint(b)
		if s.MainPID < 0 || l.PID < 0 {
			t.Fatalf("a negative pid: %+v %+v", s, l)
		}
	})
}
