// Package cmdpolicy decides whether a command may run under allow and
// deny patterns (`termkeep mcp --allow-command/--deny-command`). It does
// no I/O: it parses a command line as bash does (mvdan.cc/sh/v3/syntax)
// and judges every simple command in it, wherever it stands: in a
// pipeline or a list, a subshell, a $(...), `...` or <(...), the body of
// an if, while, for, case or function, a coproc, the script of sh -c,
// and the command a wrapper (env, nice, sudo, xargs, find -exec ...)
// runs.
//
// A pattern is a glob over a command's words joined by single blanks: `*`
// matches any run of characters (blanks and slashes too), `?` any one
// character, everything else itself. It matches a command when it matches
// the whole command or its first words: "make" matches "make" and "make
// test" but not "makeup"; "go test *" matches "go test ./...". The first
// word is also tried without its directory, so "rm" matches "/bin/rm -rf
// x" (write a path, "/usr/bin/make", to pin one program), and git without
// its own options, so "git push" matches "git -C dir push".
//
// What only running the line tells (a variable, a substitution, a glob)
// is unknown: a deny pattern refuses a command it could match, an allow
// pattern allows one only where its * covers the unknown part. A line
// whose commands cannot be known at all (eval, an alias, a program named
// by a variable, a line bash cannot parse) is refused under any pattern.
//
// With allow patterns the policy is a fence around what the line names:
// a redirection that writes a file, the variables that make a program run
// other code (PATH, LD_PRELOAD, BASH_ENV ...) and arithmetic on a variable
// are refused unless a pattern spells them out. Deny patterns catch
// mistakes and are no fence: what a program does once it runs (a Makefile,
// a script, python, find -delete, unlink) is out of their sight.
// docs/agents.md says the whole of it.
package cmdpolicy

import (
	"fmt"
	"strings"
)

// Policy holds allow and deny patterns. The zero Policy allows everything.
type Policy struct {
	allow, deny []string
}

// New checks and normalizes the patterns (blanks collapsed). An empty
// pattern is an error: it would match nothing, or everything.
func New(allow, deny []string) (*Policy, error) {
	p := &Policy{}
	for _, l := range []struct {
		flag string
		in   []string
		out  *[]string
	}{{"--allow-command", allow, &p.allow}, {"--deny-command", deny, &p.deny}} {
		for _, pat := range l.in {
			n := strings.Join(strings.Fields(pat), " ")
			if n == "" {
				return nil, fmt.Errorf("%s needs a pattern (a command and its first words, * for any text), not an empty one", l.flag)
			}
			*l.out = append(*l.out, n)
		}
	}
	return p, nil
}

// Empty reports whether p has no pattern at all, so that it allows
// everything.
func (p *Policy) Empty() bool { return p == nil || len(p.allow) == 0 && len(p.deny) == 0 }

// Restricts reports whether p allows only the commands its allow patterns
// name.
func (p *Policy) Restricts() bool { return p != nil && len(p.allow) > 0 }

// CheckLine checks a shell command line, as bash would run it: every
// command in it must match no deny pattern and, when there are allow
// patterns, one of them. The error is one line saying which command
// failed and why.
func (p *Policy) CheckLine(line string) error {
	if p.Empty() {
		return nil
	}
	c := &checker{p: p}
	c.script(line, ctx{})
	return c.err
}

// CheckArgv checks a program and its arguments, run without a shell,
// exactly as given: no word is split or expanded. A shell's `-c SCRIPT`
// (what a string command becomes: /bin/sh -c LINE) is checked as the
// command line SCRIPT.
func (p *Policy) CheckArgv(argv []string) error {
	if p.Empty() || len(argv) == 0 {
		return nil
	}
	words := make([]word, len(argv))
	for i, a := range argv {
		words[i] = lit(a)
	}
	c := &checker{p: p}
	c.command(words, ctx{})
	return c.err
}
