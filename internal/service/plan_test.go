package service

import (
	"slices"
	"testing"
)

func TestDecide(t *testing.T) {
	unit, env := []byte("unit v2"), []byte("env v2")
	running := Show{LoadState: "loaded", ActiveState: "active", SubState: "running", UnitFileState: "enabled", MainPID: 7}
	for _, tc := range []struct {
		name  string
		f     Facts
		kind  Kind
		steps []Step
	}{
		{"fresh", Facts{UnitWant: unit, EnvWant: env, Manager: true, Show: Show{LoadState: "not-found", ActiveState: "inactive"}},
			Fresh, []Step{WriteEnv, WriteUnit, Reload, Enable, Start, EnableLinger}},
		{"fresh, linger already on", Facts{UnitWant: unit, EnvWant: env, Manager: true, Linger: LingerOn},
			Fresh, []Step{WriteEnv, WriteUnit, Reload, Enable, Start}},
		{"fresh without a user manager: files and linger only", Facts{UnitWant: unit, EnvWant: env, Show: running},
			Fresh, []Step{WriteEnv, WriteUnit, EnableLinger}},
		{"unchanged", Facts{UnitOnDisk: unit, UnitWant: unit, EnvOnDisk: env, EnvWant: env, Manager: true, Show: running, SameBinary: true, Linger: LingerOn},
			Unchanged, nil},
		{"a new build at the same path: restart the server only", Facts{UnitOnDisk: unit, UnitWant: unit, EnvOnDisk: env, EnvWant: env, Manager: true, Show: running, Linger: LingerOn},
			Update, []Step{Restart}},
		{"a new binary path", Facts{UnitOnDisk: []byte("unit v1"), UnitWant: unit, EnvOnDisk: env, EnvWant: env, Manager: true, Show: running, SameBinary: true, Linger: LingerOn},
			Update, []Step{WriteUnit, Reload, Restart}},
		{"a new environment", Facts{UnitOnDisk: unit, UnitWant: unit, EnvOnDisk: []byte("env v1"), EnvWant: env, Manager: true, Show: running, SameBinary: true, Linger: LingerOn},
			Update, []Step{WriteEnv, Restart}},
		{"stopped (termkeep shutdown): start, no restart", Facts{UnitOnDisk: unit, UnitWant: unit, EnvOnDisk: env, EnvWant: env, Manager: true,
			Show: Show{LoadState: "loaded", ActiveState: "inactive", UnitFileState: "enabled"}, Linger: LingerOn},
			Update, []Step{Start}},
		{"failed", Facts{UnitOnDisk: unit, UnitWant: unit, EnvOnDisk: env, EnvWant: env, Manager: true,
			Show: Show{LoadState: "loaded", ActiveState: "failed", UnitFileState: "enabled"}, Linger: LingerOn},
			Update, []Step{Start}},
		{"disabled by hand", Facts{UnitOnDisk: unit, UnitWant: unit, EnvOnDisk: env, EnvWant: env, Manager: true, SameBinary: true,
			Show: Show{LoadState: "loaded", ActiveState: "active", UnitFileState: "disabled", MainPID: 7}, Linger: LingerOn},
			Update, []Step{Enable}},
		{"on disk but not loaded (written without a manager earlier)", Facts{UnitOnDisk: unit, UnitWant: unit, EnvOnDisk: env, EnvWant: env, Manager: true,
			Show: Show{LoadState: "not-found", ActiveState: "inactive"}, Linger: LingerOn},
			Update, []Step{Reload, Enable, Start}},
		{"active with no pid known: restart rather than guess", Facts{UnitOnDisk: unit, UnitWant: unit, EnvOnDisk: env, EnvWant: env, Manager: true,
			Show: Show{LoadState: "loaded", ActiveState: "activating", UnitFileState: "enabled"}, Linger: LingerOn},
			Update, []Step{Restart}},
		{"linger unknown is tried", Facts{UnitOnDisk: unit, UnitWant: unit, EnvOnDisk: env, EnvWant: env, Manager: true, Show: running, SameBinary: true},
			Update, []Step{EnableLinger}},
		{"an empty environment is still a file", Facts{UnitOnDisk: unit, UnitWant: unit, EnvOnDisk: nil, EnvWant: []byte{}, Manager: true, Show: running, SameBinary: true, Linger: LingerOn},
			Update, []Step{WriteEnv, Restart}},
	} {
		p := Decide(tc.f)
		if p.Kind != tc.kind || !slices.Equal(p.Steps, tc.steps) {
			t.Errorf("%s: Decide = %v %v, want %v %v", tc.name, p.Kind, p.Steps, tc.kind, tc.steps)
		}
	}
}
