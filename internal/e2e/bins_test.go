package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A directory named in TK_E2E_BIN_DIR is used only when it holds all
// three binaries as executable files.
func TestCheckBinDir(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(dir string)
		ok    bool
	}{
		{"all three", func(dir string) { touch(t, dir, "termkeep", 0o755); rest(t, dir) }, true},
		{"empty", func(dir string) {}, false},
		{"no holder", func(dir string) {
			touch(t, dir, "termkeep", 0o755)
			touch(t, dir, "termkeep-server", 0o755)
		}, false},
		{"no server", func(dir string) {
			touch(t, dir, "termkeep", 0o755)
			touch(t, dir, "termkeep-holder", 0o755)
		}, false},
		{"not executable", func(dir string) { touch(t, dir, "termkeep", 0o644); rest(t, dir) }, false},
		{"a directory", func(dir string) {
			os.Mkdir(filepath.Join(dir, "termkeep"), 0o755)
			rest(t, dir)
		}, false},
		{"a dangling link", func(dir string) {
			os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "termkeep"))
			rest(t, dir)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(dir)
			if err := checkBinDir(dir); (err == nil) != tc.ok {
				t.Errorf("checkBinDir: %v, want ok %v", err, tc.ok)
			}
		})
	}
	if err := checkBinDir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("checkBinDir of a missing directory: no error")
	}
}

// rest makes the binaries beside termkeep.
func rest(t *testing.T, dir string) {
	touch(t, dir, "termkeep-server", 0o755)
	touch(t, dir, "termkeep-holder", 0o755)
}

func touch(t *testing.T, dir, name string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
}

// The binaries a package builds for itself have the race detector as make
// test's have it.
func TestRaceFlagsAreMakefiles(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	want := "RACE := " + strings.Join(raceFlags, " ") + "\n"
	if !strings.Contains(string(b), want) {
		t.Fatalf("the Makefile has no line %q", want)
	}
}
