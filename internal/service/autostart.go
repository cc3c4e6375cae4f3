package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// servesDir reports whether a serve command line (the unit's ExecStart or
// the agent's ProgramArguments) runs the server of state directory dir.
func servesDir(argv []string, dir string) bool {
	if len(argv) < 2 || argv[1] != "serve" {
		return false
	}
	for i := 2; i < len(argv); i++ {
		a := argv[i]
		var v string
		switch {
		case a == "--state-dir" && i+1 < len(argv):
			v = argv[i+1]
		case strings.HasPrefix(a, "--state-dir="):
			v = strings.TrimPrefix(a, "--state-dir=")
		case a == "--":
			return false
		default:
			continue
		}
		return filepath.Clean(v) == filepath.Clean(dir)
	}
	return false
}

// Starter returns how to start the server of state directory dir when
// the installed unit runs it: by asking systemd, so that the server is
// the unit's (restarted on failure, alive after logout) and not a second
// one, outside it, that would hold the state directory's lock while the
// unit's failed to start again and again. nil when no unit serves dir.
func (m *Systemd) Starter(dir string) func(context.Context) error {
	unit, err := os.ReadFile(m.unitPath())
	if err != nil {
		return nil
	}
	argv, _ := unitExec(unit)
	if !servesDir(argv, dir) {
		return nil
	}
	return func(ctx context.Context) error {
		if out, err := m.systemctl(ctx, "start", UnitName); err != nil {
			return fmt.Errorf("systemctl --user start %s: %s", UnitName, firstLine(out, err))
		}
		return nil
	}
}

// Starter is Systemd.Starter for the launchd agent: kickstart starts its
// server when it is loaded and not running.
func (m *LaunchAgent) Starter(dir string) func(context.Context) error {
	b, err := os.ReadFile(m.plistPath())
	if err != nil || !servesDir(plistArgs(b), dir) {
		return nil
	}
	return func(ctx context.Context) error {
		return m.launchctl(ctx, "kickstart", m.target())
	}
}
