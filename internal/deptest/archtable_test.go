package deptest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the table in docs/architecture.md from go list")

const (
	archDoc   = "../../docs/architecture.md"
	tableFrom = "<!-- begin: go test ./internal/deptest -run TestArchitectureTable -update -->\n"
	tableTo   = "<!-- end of the generated table -->\n"
)

// binaries are the three programs make build makes, each as it is built:
// the lean CLI, the full build it execs for serve, mcp and doctor, and the
// holder.
var binaries = []struct {
	name string
	args []string // go list arguments before the package
	pkg  string
}{
	{"termkeep", []string{"-tags", "lean"}, "termkeep/cmd/termkeep"},
	{"termkeep-server", nil, "termkeep/cmd/termkeep"},
	{"termkeep-holder", nil, "termkeep/cmd/termkeep-holder"},
}

// TestArchitectureTable keeps the table of which binary links which of the
// project's packages in docs/architecture.md equal to what go list says.
// With -update it rewrites the table instead.
func TestArchitectureTable(t *testing.T) {
	want := linkTable(t)
	doc, err := os.ReadFile(archDoc)
	if err != nil {
		t.Fatal(err)
	}
	from := bytes.Index(doc, []byte(tableFrom))
	to := bytes.Index(doc, []byte(tableTo))
	if from < 0 || to < from {
		t.Fatalf("%s: no table between %q and %q", archDoc, tableFrom, tableTo)
	}
	from += len(tableFrom)
	if string(doc[from:to]) == want {
		return
	}
	if *update {
		out := append(append(append([]byte{}, doc[:from]...), want...), doc[to:]...)
		if err := os.WriteFile(archDoc, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/architecture.md's table of binaries and packages is out of date "+
		"(go test ./internal/deptest -run TestArchitectureTable -update rewrites it); want:\n%s", want)
}

// linkTable renders, for every package of the module that a binary links,
// which binaries link it.
func linkTable(t *testing.T) string {
	t.Helper()
	links := map[string][]bool{}
	for i, b := range binaries {
		args := append(append([]string{}, b.args...), "-deps", b.pkg)
		for _, p := range list(t, args...) {
			if !strings.HasPrefix(p, "termkeep/") {
				continue
			}
			if links[p] == nil {
				links[p] = make([]bool, len(binaries))
			}
			links[p][i] = true
		}
	}
	pkgs := make([]string, 0, len(links))
	for p := range links {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	var b strings.Builder
	b.WriteString("| package |")
	for _, bin := range binaries {
		fmt.Fprintf(&b, " %s |", bin.name)
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat(":-:|", len(binaries)))
	b.WriteString("\n")
	for _, p := range pkgs {
		fmt.Fprintf(&b, "| `%s` |", strings.TrimPrefix(p, "termkeep/"))
		for _, in := range links[p] {
			if in {
				b.WriteString(" ✓ |")
			} else {
				b.WriteString(" |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// The map stays a map: what does not fit belongs in a package's doc or a
// topic document.
func TestArchitectureIsShort(t *testing.T) {
	doc, err := os.ReadFile(archDoc)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(doc, []byte("\n")); n > 350 {
		t.Errorf("docs/architecture.md has %d lines, over 350: move detail to the package docs or docs/", n)
	}
}
