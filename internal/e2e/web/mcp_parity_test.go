package web

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/runout"
)

// parityCase is one command of testdata/parity.txt.
type parityCase struct {
	name, shells, command string
	fast                  bool
}

var parityHead = regexp.MustCompile(`^=== (.+?) \[(all|posix|fish)\]( \[fast\])?$`)

func loadParity(t *testing.T) []parityCase {
	t.Helper()
	b, err := os.ReadFile("testdata/parity.txt")
	if err != nil {
		t.Fatal(err)
	}
	var cases []parityCase
	var lines []string
	end := func() {
		if len(cases) > 0 {
			cases[len(cases)-1].command = strings.Join(lines, "\n")
		}
		lines = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		if m := parityHead.FindStringSubmatch(l); m != nil {
			end()
			cases = append(cases, parityCase{name: m[1], shells: m[2], fast: m[3] != ""})
			continue
		}
		if len(cases) > 0 {
			lines = append(lines, l)
		}
	}
	end()
	return cases
}

func (c parityCase) in(shell string) bool {
	return c.shells == "all" || c.shells == "fish" && shell == "fish" || c.shells == "posix" && shell != "fish"
}

// scriptPosition matches what a shell's own diagnostics say about where
// in a script they are: `bash -c` says "bash: line 1: ", zsh "zsh:1: "
// or "zsh:cd:1: ", and fish adds lines showing the script's line and a
// function's traceback. At a prompt there is no script, and no position.
var scriptPosition = map[string]*regexp.Regexp{
	"bash": regexp.MustCompile(`(?m)^bash: line \d+: `),
	"zsh":  regexp.MustCompile(`(?m)^zsh:(?:([a-z]+):)?\d+: `),
	"fish": regexp.MustCompile(`(?m)^fish: \n.*\n *\^~*\^?\n|(?ms)^/\S+\.fish \(line \d+\): \n.*?^in function '[^\n]*' with arguments '[^\n]*'\n`),
}

// jobNotice matches what an interactive shell prints when a command it
// waited for was ended by a signal (bash: "Terminated"; zsh: "zsh:
// terminated  CMD"; fish: "fish: Job 1, 'CMD' terminated by signal …").
var jobNotice = map[string]*regexp.Regexp{
	"bash": regexp.MustCompile(`(?m)^(Terminated|Killed|Hangup|Quit|Aborted)( \(core dumped\))?\n`),
	"zsh":  regexp.MustCompile(`(?m)^zsh: (terminated|killed|hangup|quit|abort)\b.*\n`),
	"fish": regexp.MustCompile(`(?m)^fish: Job \d+, '.*' terminated by signal .*\n(?:.*\n)?`),
}

// render is output as a terminal 80 columns wide shows it (runout's text
// filter, which run_command's text comes from: CR, backspace and escape
// sequences rendered, "\r\n" as "\n").
func render(out []byte) string {
	f := runout.TextFilter{Cols: 80}
	return string(f.Filter(out)) + string(f.Flush())
}

// asAtPrompt is `SHELL -c`'s text with the shell's diagnostics worded as
// at a prompt.
func asAtPrompt(shell, text string) string {
	re := scriptPosition[shell]
	if shell == "fish" {
		return re.ReplaceAllString(text, "")
	}
	return re.ReplaceAllStringFunc(text, func(m string) string {
		if sub := re.FindStringSubmatch(m); len(sub) > 1 && sub[1] != "" {
			return sub[1] + ": " // at a prompt zsh names the builtin, not itself
		}
		return shell + ": "
	})
}

// withoutNotices is run_command's text without the shell's notices of a
// command ended by a signal, and the line break bash and zsh print after
// one ended by Ctrl-C's SIGINT (status 130).
func withoutNotices(shell, text string, code any) string {
	text = jobNotice[shell].ReplaceAllString(text, "")
	if code == 130.0 && shell != "fish" {
		text = strings.TrimSuffix(text, "\n")
	}
	return text
}

// run_command gives what `SHELL -c` gives, for each command of
// testdata/parity.txt in bash, zsh and fish (those installed): the same
// text and exit status, but for terminal rendering of control bytes and
// what only an interactive shell prints (docs/agents.md). The commands
// marked fast run in the normal suite; TK_PARITY=1 (make parity) runs
// all of them.
func TestMCPRunCommandParity(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	full := os.Getenv("TK_PARITY") != ""
	var cases []parityCase
	for _, c := range loadParity(t) {
		if full || c.fast {
			cases = append(cases, c)
		}
	}
	e := e2e.NewEnv(t)
	c, ids, home := shellSessions(t, e)

	var mu sync.Mutex
	runs, diffs := 0, 0
	var wg sync.WaitGroup
	for sh, id := range ids {
		path, _ := exec.LookPath(sh)
		// A directory for each shell: the shells run side by side, and
		// some commands write files.
		work := filepath.Join(t.TempDir(), sh)
		os.MkdirAll(filepath.Join(work, "sub"), 0o755)
		os.WriteFile(filepath.Join(work, "a.txt"), []byte("alpha\nbeta\n"), 0o644)
		os.WriteFile(filepath.Join(work, "tab.txt"), []byte("a\tb\tcc\tddddd\te\n"), 0o644)
		os.WriteFile(filepath.Join(work, "uni.txt"), []byte("ü\n"), 0o644)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cd := map[string]any{"session": id, "command": "cd '" + work + "'"}
			if _, text, isErr := c.try("run_command", cd); isErr {
				t.Errorf("%s: %s", sh, text)
				return
			}
			for _, pc := range cases {
				if !pc.in(sh) {
					continue
				}
				r, text, isErr := c.try("run_command", map[string]any{"session": id, "command": pc.command, "timeout_ms": 20000})
				if isErr {
					t.Errorf("%s %s: %s", sh, pc.name, text)
					continue
				}
				want, wantCode := shellC(t, sh, path, pc.command, work, home)
				got := r["output"].(string)
				mu.Lock()
				runs++
				if render([]byte(withoutNotices(sh, got, r["exit_code"]))) != asAtPrompt(sh, render(want)) || r["exit_code"] != float64(wantCode) {
					diffs++
					t.Errorf("%s %s: %q\nrun_command: %v %q\n%s -c:      %d %q", sh, pc.name, pc.command, r["exit_code"], got, sh, wantCode, want)
				}
				mu.Unlock()
				if r["cwd"] != work {
					c.try("run_command", cd)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("SUMMARY parity: %d commands, %d runs in %d shells, %d differences", len(cases), runs, len(ids), diffs)
}

// shellC runs command as `shell -c` does under a pipe (the shell's path
// and its name as $0), in dir, with the test's variables and the home a
// session made through MCP gets: its output (stdout and stderr together)
// and exit status, as a shell reports it (128+N for signal N: a -c shell
// may exec its last command, which then takes the signal in its place).
func shellC(t *testing.T, name, path, command, dir, home string) ([]byte, int) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-c", command)
	cmd.Args[0] = name
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "HISTFILE="+filepath.Join(home, "hist"))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return out, 128 + int(ws.Signal())
		}
		return out, ee.ExitCode()
	case err != nil:
		t.Errorf("%s -c %q: %v", name, command, err)
	}
	return out, 0
}
