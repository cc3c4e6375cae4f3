// Package deptest holds a package's tests to the layering of termkeep's
// packages: what each may not link in, directly or not, and why. It is
// imported by tests only, and asks the go tool (`go list`), so the rules
// hold for the code as it builds, build tags included.
package deptest

import (
	"os/exec"
	"strings"
	"testing"
)

// Forbid fails t once for each package in forbidden (import path => why it
// is forbidden) that the packages matching pattern ("termkeep/internal/x",
// or "termkeep/internal/x/..." with the packages below it) depend on,
// directly or not. It skips t when there is no go tool.
func Forbid(t testing.TB, pattern string, forbidden map[string]string) {
	t.Helper()
	forbid(t, Deps(t, pattern), pattern, forbidden)
}

// Deps returns every package the packages matching pattern depend on,
// directly or not, themselves included. It skips t when there is no go
// tool.
func Deps(t testing.TB, pattern string) []string {
	t.Helper()
	return list(t, "-deps", pattern)
}

// ForbidTagged is Forbid for the packages as built with the build tags
// tags (comma-separated).
func ForbidTagged(t testing.TB, tags, pattern string, forbidden map[string]string) {
	t.Helper()
	forbid(t, list(t, "-tags", tags, "-deps", pattern), pattern+" (tags "+tags+")", forbidden)
}

func forbid(t testing.TB, deps []string, what string, forbidden map[string]string) {
	t.Helper()
	for _, p := range deps {
		if why, ok := forbidden[p]; ok {
			t.Errorf("%s depends on %s: %s", what, p, why)
		}
	}
}

// Imports returns what the package pkg imports itself (not what those
// import in turn). It skips t when there is no go tool.
func Imports(t testing.TB, pkg string) []string {
	t.Helper()
	return list(t, "-f", `{{join .Imports " "}}`, pkg)
}

func list(t testing.TB, args ...string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	out, err := exec.Command(goTool, append([]string{"list"}, args...)...).Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + strings.TrimSpace(string(ee.Stderr))
		}
		t.Fatalf("go list %s: %s", strings.Join(args, " "), msg)
	}
	return strings.Fields(string(out))
}
