package session

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// A session whose holder is gone is resolved from what the holder left on
// disk: an end only its status record has (meta.json refused on a full
// disk) and a child's exit recorded while the holder lingered are exits
// with the child's status, never interruptions, which a restore would run
// again; with neither, the session is interrupted.
func TestResolveFromDisk(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	seven := 7
	base := sessiondir.Meta{ID: "s", HolderPid: gone.Process.Pid, Pid: gone.Process.Pid, StartedAt: at, Cols: 80, Rows: 24}
	for _, tc := range []struct {
		name   string
		meta   func(m *sessiondir.Meta)
		status func(m *sessiondir.Meta) // the status record's content; nil: none
		want   string
	}{
		{"nothing recorded", nil, nil, "interrupted -"},
		{"the end only in the status record", nil, func(m *sessiondir.Meta) { m.EndedAt, m.ExitCode = &at, &seven }, "exited 7"},
		{"the child's exit while lingering", func(m *sessiondir.Meta) { m.Child = &sessiondir.ChildExit{At: at, ExitCode: 3} }, nil, "exited 3"},
		{"the child's exit only in the status record", nil, func(m *sessiondir.Meta) { m.Child = &sessiondir.ChildExit{At: at, ExitCode: 4} }, "exited 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := base
			if tc.meta != nil {
				tc.meta(&m)
			}
			if err := sessiondir.WriteMeta(dir, m); err != nil {
				t.Fatal(err)
			}
			if tc.status != nil {
				s := base
				tc.status(&s)
				w, err := sessiondir.CreateStatus(dir, sessiondir.StatusOf(s), nil)
				if err != nil {
					t.Fatal(err)
				}
				w.Close()
			}
			l, err := outlog.Open(filepath.Join(dir, sessiondir.LogDir), outlog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			l.Append([]byte("output"))
			l.Close()
			os.Remove(filepath.Join(dir, sessiondir.LockFile))
			h := New(Config{ID: "s", Dir: dir})
			defer h.Close()
			e := h.Resolve()
			got := e.State + " -"
			if e.ExitCode != nil {
				got = fmt.Sprintf("%s %d", e.State, *e.ExitCode)
			}
			if got != tc.want {
				t.Fatalf("resolved %s (%+v), want %s", got, e, tc.want)
			}
		})
	}
}

// A holder told the machine is shutting down leaves the mark in
// meta.json: its end, or its death without one (systemd's last SIGKILL),
// is the shutdown's.
func TestResolveShutdown(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	zero := 0
	base := sessiondir.Meta{ID: "s", HolderPid: gone.Process.Pid, Pid: gone.Process.Pid, StartedAt: at, Cols: 80, Rows: 24}
	for _, tc := range []struct {
		name  string
		meta  func(m *sessiondir.Meta)
		state string
		cause string
	}{
		{"killed after the shutdown frame", func(m *sessiondir.Meta) { m.ShutdownAt = &at }, "interrupted", wire.CauseShutdown},
		{"killed with no shutdown frame", nil, "interrupted", ""},
		{"ended by the shutdown's SIGTERM", func(m *sessiondir.Meta) {
			m.ShutdownAt, m.EndedAt, m.Interrupted, m.Reason = &at, &at, true, "stopped by SIGTERM: the machine shutting down"
		}, "interrupted", wire.CauseShutdown},
		{"stopped by SIGTERM, no shutdown frame", func(m *sessiondir.Meta) { m.EndedAt, m.Interrupted = &at, true }, "interrupted", wire.CauseStopped},
		{"exited 0 as the machine shut down", func(m *sessiondir.Meta) { m.ShutdownAt, m.EndedAt, m.ExitCode = &at, &at, &zero }, "exited", ""},
		{"the child's exit recorded, then killed", func(m *sessiondir.Meta) {
			m.ShutdownAt, m.Child = &at, &sessiondir.ChildExit{At: at, ExitCode: 3}
		}, "exited", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := base
			if tc.meta != nil {
				tc.meta(&m)
			}
			if err := sessiondir.WriteMeta(dir, m); err != nil {
				t.Fatal(err)
			}
			h := New(Config{ID: "s", Dir: dir})
			defer h.Close()
			e := h.Resolve()
			if e.State != tc.state || e.Cause != tc.cause {
				t.Fatalf("resolved %+v, want %s with cause %q", e, tc.state, tc.cause)
			}
			if tc.cause == wire.CauseShutdown && !strings.Contains(e.Reason, "shut") {
				t.Fatalf("reason %q does not say the machine shut down", e.Reason)
			}
		})
	}
}
