package runcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scriptCase is a command and the output it must print.
type scriptCase struct {
	name string
	spec Spec
	want string
}

// The line typed for a command is one line of printable text that the
// shell runs as the command itself: in a directory and with variables of
// its own when asked, which do not outlast it.
func TestTypedLine(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "it's sub")
	os.Mkdir(sub, 0o755)
	posix := []scriptCase{
		{"one line", Spec{Line: "echo one"}, "one\n"},
		{"lines", Spec{Line: "echo a\necho 'b c'\n"}, "a\nb c\n"},
		{"heredoc with a tab", Spec{Line: "cat <<EOF\nline1\n\tline2 'q' \\\\ \"d\"\nEOF"}, "line1\n\tline2 'q' \\ \"d\"\n"},
		{"a loop", Spec{Line: "for i in 1 2\ndo\n  echo $i\ndone"}, "1\n2\n"},
		{"a comment at the end", Spec{Line: "echo x # no )", Cwd: sub}, "x\n"},
		{"cwd", Spec{Line: "pwd", Cwd: sub}, sub + "\n"},
		{"relative cwd", Spec{Line: "pwd", Cwd: "it's sub"}, sub + "\n"},
		{"env", Spec{Line: `printf '%s|' "$A" "$B"`, Env: []string{"A=1 2", "B=x'\ty\nz"}}, "1 2|x'\ty\nz|"},
		{"cwd and env do not last", Spec{Line: "cd /; X=1", Cwd: sub, Env: []string{"Y=2"}}, ""},
		{"exit status", Spec{Line: "false\n(exit 7)", Cwd: sub}, ""},
	}
	fish := []scriptCase{
		{"one line", Spec{Line: "echo one"}, "one\n"},
		{"lines", Spec{Line: "echo a\necho 'b c'\n"}, "a\nb c\n"},
		{"a loop with a tab", Spec{Line: "for i in 1 2\n\techo \\$i $i\nend"}, "$i 1\n$i 2\n"},
		{"cwd", Spec{Line: "pwd", Cwd: sub}, sub + "\n"},
		{"relative cwd", Spec{Line: "pwd", Cwd: "it's sub"}, sub + "\n"},
		{"env", Spec{Line: `printf '%s|' "$A" "$B"`, Env: []string{"A=1 2", "B=x'\ty\nz\\"}}, "1 2|x'\ty\nz\\|"},
		{"cwd and env do not last", Spec{Line: "cd /; set Y 1", Cwd: sub, Env: []string{"Y=2"}}, ""},
		{"exit status", Spec{Line: "false\nsh -c 'exit 7'", Cwd: sub}, ""},
	}
	// After each line: where the shell is, what it has kept, the status.
	check := map[string]string{"posix": `; echo "[$? $PWD ${X-} ${Y-}]"`, "fish": `; echo "[$status $PWD $X $Y]"`}
	for _, sh := range []string{"bash", "zsh", "sh", "fish"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("%s is not installed: skipped", sh)
			continue
		}
		cases, kind := posix, "posix"
		if sh == "fish" {
			cases, kind = fish, "fish"
		}
		for _, c := range cases {
			line := typedLine(sh, c.spec)
			if strings.ContainsFunc(line, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Errorf("%s %s: typed %q, not one line of printable text", sh, c.name, line)
				continue
			}
			cmd := exec.Command(path, "-c", line+check[kind])
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "X=", "Y=")
			out, err := cmd.CombinedOutput()
			status := "0"
			if c.name == "exit status" {
				status = "7"
			}
			want := c.want + "[" + status + " " + dir + "  ]\n"
			if err != nil || string(out) != want {
				t.Errorf("%s %s: typed %q\ngot  %q (%v)\nwant %q", sh, c.name, line, out, err, want)
			}
		}
	}
}
