// Package cmdpolicy decides whether a command may run under allow and
// deny patterns (`termkeep mcp --allow-command/--deny-command`). It does
// no I/O: it reads a command line as /bin/sh would split it into simple
// commands and matches each against the patterns.
//
// A pattern is a glob over a command's words joined by single blanks: `*`
// matches any run of characters (blanks and slashes too), `?` any one
// character, everything else itself. It matches a command when it matches
// the whole command or its first words: "make" matches "make" and "make
// test" but not "makeup"; "go test *" matches "go test ./...". The first
// word is also tried without its directory, so "rm" matches "/bin/rm -rf
// x" (write a path, "/usr/bin/make", to pin one program).
//
// The patterns guard against mistakes; they are no fence. What a command
// does once it runs (a Makefile, a script, `env rm`, `sudo`, `$CMD`, a
// shell started by an allowed program) is out of their sight.
package cmdpolicy

import (
	"errors"
	"fmt"
	"path"
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

// ErrSubstitution is a command line whose commands cannot be known before
// it runs.
var ErrSubstitution = errors.New("command substitution ($(...), `...`, <(...), >(...)) cannot be checked against --allow-command and --deny-command; run each command by itself")

// CheckLine checks a shell command line: each simple command in it (split
// at ; & | && || newlines and parentheses, quotes removed, leading
// variable assignments and keywords such as `if`, `then`, `!` left out)
// must match no deny pattern and, when there are allow patterns, one of
// them.
func (p *Policy) CheckLine(line string) error {
	if p.Empty() {
		return nil
	}
	cmds, err := Split(line)
	if err != nil {
		return err
	}
	for _, words := range cmds {
		if err := p.check(words); err != nil {
			return err
		}
	}
	return nil
}

// shells are the programs whose `-c SCRIPT` is checked as the script.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// CheckArgv checks a program and its arguments, run without a shell. A
// shell's `-c SCRIPT` (what a string command becomes: /bin/sh -c LINE) is
// checked as the command line SCRIPT.
func (p *Policy) CheckArgv(argv []string) error {
	if p.Empty() || len(argv) == 0 {
		return nil
	}
	if len(argv) >= 3 && shells[path.Base(argv[0])] && argv[1] == "-c" {
		return p.CheckLine(argv[2])
	}
	return p.check(argv)
}

// check decides for one simple command.
func (p *Policy) check(words []string) error {
	if len(words) == 0 {
		return nil
	}
	cmd := strings.Join(strings.Fields(strings.Join(words, " ")), " ")
	forms := []string{cmd}
	if base := path.Base(words[0]); base != words[0] && strings.Contains(words[0], "/") {
		forms = append(forms, strings.Join(strings.Fields(strings.Join(append([]string{base}, words[1:]...), " ")), " "))
	}
	for _, pat := range p.deny {
		for _, f := range forms {
			if matches(pat, f) {
				return fmt.Errorf("the command %q matches --deny-command %q: this MCP server may not run it", cmd, pat)
			}
		}
	}
	if len(p.allow) == 0 {
		return nil
	}
	for _, pat := range p.allow {
		for _, f := range forms {
			if matches(pat, f) {
				return nil
			}
		}
	}
	return fmt.Errorf("the command %q matches no --allow-command pattern (%s): this MCP server may run only those", cmd, quoteList(p.allow))
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// matches reports whether pat matches cmd whole or its first words.
func matches(pat, cmd string) bool {
	return glob(pat, cmd) || glob(pat+" *", cmd)
}

// glob matches s against pat, where * is any run of characters and ? one
// character. Greedy with one backtrack point: linear in practice,
// len(pat)*len(s) at worst.
func glob(pat, s string) bool {
	p, r := []rune(pat), []rune(s)
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(r) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(p) && (p[pi] == '?' || p[pi] == r[si]):
			pi++
			si++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
