package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// binaries are what BinDir holds, built as make builds them: termkeep
// the lean build, which hands serve, mcp and doctor to termkeep-server;
// the static ones without libc.
var binaries = []struct {
	name, pkg, tags string
	static          bool
}{
	{"termkeep", "./cmd/termkeep", "lean", true},
	{"termkeep-server", "./cmd/termkeep", "", false},
	{"termkeep-holder", "./cmd/termkeep-holder", "", true},
}

// raceFlags are go build's flags for the race detector, as make test
// passes them: every package instrumented but modernc's SQLite and libc,
// C translated to Go, whose instrumentation cost each server start a third
// of its CPU and internal/store's tests three quarters. The driver
// (modernc.org/sqlite), where termkeep's goroutines call SQLite, stays
// instrumented.
var raceFlags = []string{"-race", "-gcflags=modernc.org/sqlite/lib=-race=false", "-gcflags=modernc.org/libc/...=-race=false"}

// buildBinaries builds termkeep, termkeep-server and termkeep-holder into
// a new temporary directory and returns it; with the race detector when
// race says so.
func buildBinaries(race bool) (string, error) {
	dir, err := os.MkdirTemp("", "tkbin")
	if err != nil {
		return "", err
	}
	for _, b := range binaries {
		args := []string{"build", "-o", filepath.Join(dir, b.name)}
		if race {
			args = append(args, raceFlags...)
		}
		if b.tags != "" {
			args = append(args, "-tags", b.tags)
		}
		cmd := exec.Command("go", append(args, b.pkg)...)
		cmd.Dir = moduleRoot()
		if b.static && !race {
			// The race detector needs cgo.
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// checkBinDir says what is wrong with a directory of binaries built
// beforehand, if anything.
func checkBinDir(dir string) error {
	for _, b := range binaries {
		fi, err := os.Stat(filepath.Join(dir, b.name))
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("%s is not an executable file", filepath.Join(dir, b.name))
		}
	}
	return nil
}
