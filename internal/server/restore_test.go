package server

import (
	"strings"
	"testing"
	"time"

	"termkeep/internal/server/restorepolicy"
	"termkeep/internal/store"
)

// The restore line says what ended the previous process, as far as it is
// known, and never speaks of a reboot the server did not see.
func TestRestoreBannerNamesTheCause(t *testing.T) {
	now := time.Date(2026, 3, 4, 14, 2, 0, 0, time.Local)
	code := 3
	for _, tc := range []struct {
		state store.State
		code  *int
		cause restorepolicy.Cause
		want  string
	}{
		{store.StateInterrupted, nil, restorepolicy.MachineRestarted, "restored at 14:02 after the machine restarted, previous process ended"},
		{store.StateInterrupted, nil, restorepolicy.HolderKilled, "restored at 14:02 after its holder was killed, previous process ended"},
		{store.StateInterrupted, nil, restorepolicy.Stopped, "restored at 14:02 after its holder was stopped (the machine or the service stopping), previous process ended"},
		{store.StateInterrupted, nil, restorepolicy.Unknown, "restored at 14:02, previous process interrupted"},
		{store.StateInterrupted, nil, "from-a-newer-termkeep", "restored at 14:02, previous process interrupted"},
		{store.StateExited, &code, restorepolicy.Unknown, "restarted at 14:02, previous process exited with status 3"},
		{store.StateClosed, nil, restorepolicy.MachineRestarted, "restarted at 14:02, previous process was ended"},
	} {
		b := restoreBanner(store.Session{State: tc.state, ExitCode: tc.code}, tc.cause, false, now, nil)
		if !strings.Contains(b, "── "+tc.want+" ──") {
			t.Errorf("%s, %q: banner %q; want %q", tc.state, tc.cause, b, tc.want)
		}
		if strings.Contains(b, "reboot") {
			t.Errorf("%s, %q: banner %q speaks of a reboot", tc.state, tc.cause, b)
		}
	}
}

// parseLinger's table: "" is the default, "0" none, a Go duration up to a
// day; anything else is refused with a sentence.
func TestParseLinger(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", DefaultLinger, true},
		{"0", 0, true},
		{"0s", 0, true},
		{"90s", 90 * time.Second, true},
		{"24h", 24 * time.Hour, true},
		{"24h0m1s", 0, false},
		{"-1s", 0, false},
		{"60", 0, false},
		{"soon", 0, false},
		{"1e400h", 0, false},
	} {
		got, err := parseLinger(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseLinger(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "such as 30s") {
			t.Errorf("parseLinger(%q): %q does not say what a linger looks like", tc.in, err)
		}
	}
}
