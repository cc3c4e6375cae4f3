package screen_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"termkeep/internal/screen"
)

// The reference: web/test/xterm-dump.mjs feeds cases to xterm.js
// (@xterm/headless with Unicode 11 widths) and prints each one's Dump. It
// runs under node with the packages `npm ci` puts in web/node_modules.

// xtermDumper returns the dumper's path, or fails the test with what to
// do: the reference is part of the suite, so a missing one is a failure,
// not a skip.
func xtermDumper(t testing.TB) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "web", "test", "xterm-dump.mjs")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("the xterm.js reference is missing: %v", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not installed, and the screen model is tested against xterm.js running under it: install Node.js (apt-get install nodejs npm), then run `make test`")
	}
	if _, err := os.Stat(filepath.Join(root, "web", "node_modules", "@xterm", "headless")); err != nil {
		t.Fatalf("web/node_modules has no @xterm/headless: run `make test` (it runs `npm ci` in web/) or `npm ci --prefix web`")
	}
	return script
}

// moduleRoot is the directory of go.mod above the working directory (the
// package directory, under go test).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// runXterm runs the dumper once over the given case files and returns
// their dumps, normalized, in the same order.
func runXterm(t testing.TB, casePaths []string) ([]screen.Dump, error) {
	t.Helper()
	script := xtermDumper(t)
	list, err := json.Marshal(casePaths)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", script)
	cmd.Stdin = bytes.NewReader(list)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the xterm.js dumper: %w", err)
	}
	dec := json.NewDecoder(stdout)
	var dumps []screen.Dump
	var decErr error
	for range casePaths {
		var d screen.Dump
		if err := dec.Decode(&d); err != nil {
			decErr = fmt.Errorf("read dump %d of %d (%s): %w", len(dumps)+1, len(casePaths), casePaths[len(dumps)], err)
			break
		}
		d.Normalize()
		dumps = append(dumps, d)
	}
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("node %s: %v: %s", script, err, stderr.Bytes())
	}
	if decErr != nil {
		return nil, decErr
	}
	return dumps, nil
}

// The corpus's xterm.js dumps are made once per test binary and shared by
// the tests that need them (node takes a while to start and run).
var xtermCorpus struct {
	once  sync.Once
	dumps map[string]screen.Dump
	err   error
}

// corpusXtermDumps returns xterm.js's dump of every corpus case, by name.
func corpusXtermDumps(t testing.TB, cases []corpusCase) map[string]screen.Dump {
	t.Helper()
	xtermDumper(t) // fail with the how-to, not inside the once
	xtermCorpus.once.Do(func() {
		paths := make([]string, len(cases))
		for i, c := range cases {
			paths[i] = c.Path
		}
		dumps, err := runXterm(t, paths)
		if err != nil {
			xtermCorpus.err = err
			return
		}
		xtermCorpus.dumps = make(map[string]screen.Dump, len(cases))
		for i, c := range cases {
			xtermCorpus.dumps[c.Name] = dumps[i]
		}
	})
	if xtermCorpus.err != nil {
		t.Fatalf("xterm.js over the corpus: %v", xtermCorpus.err)
	}
	if xtermCorpus.dumps == nil {
		t.Fatal("xterm.js over the corpus failed in an earlier test")
	}
	return xtermCorpus.dumps
}
