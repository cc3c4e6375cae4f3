package termq

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"termkeep/internal/deptest"
)

// TestDeps keeps the terminal-question decisions pure: they are linked
// into the session host, which owns the sockets, the processes and the
// clock; termq owns none of them.
func TestDeps(t *testing.T) {
	deptest.Forbid(t, "termkeep/internal/termq", map[string]string{
		"net":                      "termq does no I/O: the host reads and writes the sockets",
		"net/http":                 "termq does no I/O: the host reads and writes the sockets",
		"database/sql":             "the registry is the store's business",
		"os/exec":                  "termq starts no processes",
		"os/signal":                "termq handles no signals",
		"termkeep/internal/holder": "the holder's side of the pty is not termq's business",
	})
	for _, p := range deptest.Deps(t, "termkeep/internal/termq") {
		if strings.HasPrefix(p, "termkeep/") && p != "termkeep/internal/termq" {
			t.Errorf("termq depends on %s: it stands on the standard library alone", p)
		}
	}
	direct := map[string]string{
		"os":          "no files, no environment",
		"io":          "bytes come in as arguments",
		"sync":        "the arbiter is single-threaded: its owner holds the lock",
		"sync/atomic": "the arbiter is single-threaded: its owner holds the lock",
		"syscall":     "no system calls",
		"runtime":     "no goroutines",
		"unsafe":      "no unsafe memory",
	}
	for _, p := range deptest.Imports(t, "termkeep/internal/termq") {
		if why, ok := direct[p]; ok {
			t.Errorf("termq imports %s: %s", p, why)
		}
	}
}

// TestNoClock keeps termq off the clock: time is passed in, so every
// decision can be replayed from a script (arbiter_test.go).
func TestNoClock(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	banned := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
		"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" && banned[sel.Sel.Name] {
					t.Errorf("%s: time.%s: termq is given the time, it does not read the clock or wait", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}
