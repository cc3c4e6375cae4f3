package main

import (
	"strings"
	"testing"

	"termkeep/internal/api"
)

func TestLsState(t *testing.T) {
	code := 3
	for _, tc := range []struct {
		name   string
		s      api.Session
		server int
		want   string
	}{
		{"running, same protocol", api.Session{State: "running", HolderProtocol: 4}, 4, "running"},
		{"running, an older holder", api.Session{State: "running", HolderProtocol: 2}, 4, "running, holder protocol 2 (server 4)"},
		{"a newer holder than the server (a downgrade) is said too", api.Session{State: "running", HolderProtocol: 5}, 4, "running, holder protocol 5 (server 4)"},
		{"holder not connected: nothing known", api.Session{State: "running"}, 4, "running"},
		{"an old server that says no protocol", api.Session{State: "running", HolderProtocol: 2}, 0, "running"},
		{"exited", api.Session{State: "exited", ExitCode: &code, HolderProtocol: 2}, 4, "exited(3)"},
	} {
		if got := lsState(tc.s, tc.server); got != tc.want {
			t.Errorf("%s: lsState = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := lsState(api.Session{State: "interrupted", CauseText: "the machine restarted"}, 4); !strings.Contains(got, "interrupted: the machine restarted") {
		t.Errorf("lsState = %q", got)
	}
}
