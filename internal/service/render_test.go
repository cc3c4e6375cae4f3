package service

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from what is rendered now (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

var goldenSpec = Spec{
	Binary:   "/home/ann/.local/bin/termkeep",
	StateDir: "/home/ann/.local/state/termkeep",
	EnvFile:  "/home/ann/.config/termkeep/service.env",
	LogFile:  "/Users/ann/Library/Logs/termkeep/server.log",
	Env:      []Var{{"PATH", "/home/ann/.local/bin:/usr/bin:/bin"}, {"LANG", "en_US.UTF-8"}},
}

func TestUnitGolden(t *testing.T) {
	golden(t, "termkeep.service", Unit(goldenSpec))
	s := goldenSpec
	s.StateDir = "/home/ann/my state/100%"
	s.Args = []string{"--listen", "off", `--allowed-origin=https://a "b" $HOME\x`}
	golden(t, "termkeep-args.service", Unit(s))
}

func TestPlistGolden(t *testing.T) {
	s := goldenSpec
	s.StateDir = "/Users/ann/Library/Application Support/termkeep"
	s.Binary = "/Users/ann/.local/bin/termkeep"
	s.Env = append(s.Env, Var{"SSH_AUTH_SOCK", "/tmp/<ssh> & 'agent'"})
	p := Plist(s)
	golden(t, "termkeep.plist", p)
	// Well formed, and the values come back as they went in.
	d := xml.NewDecoder(bytes.NewReader(p))
	var texts []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the plist is not well-formed XML: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			texts = append(texts, string(cd))
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"/tmp/<ssh> & 'agent'", "/Users/ann/Library/Application Support/termkeep", "AbandonProcessGroup", "SuccessfulExit"} {
		if !strings.Contains(all, want) {
			t.Errorf("the plist's text lacks %q", want)
		}
	}
}

func TestExecQuote(t *testing.T) {
	for _, arg := range []string{
		"plain", "", "two words", "new\nline", "lone $", "lone %", `a"quote`, `back\slash`, "100%", "$HOME", "${X}", "%h", "tab\there", "'single'", ";", "é",
	} {
		line := execQuote([]string{"/bin/x", arg, "end"})
		got, err := execSplit(line)
		if err != nil || len(got) != 3 || got[1] != arg {
			t.Errorf("execQuote(%q) = %s, which systemd splits into %q", arg, line, got)
		}
	}
}

// The unit passes systemd's own check, when systemd-analyze is installed.
// It needs no running systemd: only a runtime directory for the user
// manager it plays.
func TestUnitVerifies(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	dir := t.TempDir()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := goldenSpec
	s.Binary, s.StateDir, s.EnvFile = bin, dir, filepath.Join(dir, "service.env")
	// Quoting systemd must read back: spaces, quotes, %, $ and backslashes.
	s.Args = []string{"--listen", "127.0.0.1:0", `--allowed-origin=https://a "b" 100% $HOME\x`, ";"}
	unit := filepath.Join(dir, UnitName)
	if err := os.WriteFile(unit, Unit(s), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sa, "--user", "verify", unit)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "Failed to initialize manager") {
		t.Skipf("systemd-analyze cannot play a user manager here: %s", out)
	}
	// verify exits 0 on a setting it ignores: any word from it is a fault.
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze --user verify: %v\n%s\n%s", err, out, Unit(s))
	}
}

func TestExecSplitRefuses(t *testing.T) {
	for _, line := range []string{`"open`, `a $HOME`, `100%`, `tail\`} {
		if got, err := execSplit(line); err == nil {
			t.Errorf("execSplit(%q) = %q; want an error", line, got)
		}
	}
}

func FuzzExecSplit(f *testing.F) {
	f.Add("/bin/x", "a b", `"q\\"`)
	f.Add("", "%%", "$$")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		args := []string{a, b, c}
		got, err := execSplit(execQuote(args))
		if err != nil || !slices.Equal(got, args) {
			t.Fatalf("execSplit(execQuote(%q)) = %q, %v", args, got, err)
		}
		execSplit(a + b + c) // any line: an error or words, never a crash
	})
}
