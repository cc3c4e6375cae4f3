package cmdpolicy

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// command checks one simple command, argv with the writes it inherits,
// and what it runs in turn.
func (c *checker) command(argv []word, in ctx) {
	if c.err != nil {
		return
	}
	if len(argv) == 0 {
		if len(in.writes) > 0 { // `> f` alone creates f
			c.deny(nil, in)
			c.allow(nil, in)
		}
		return
	}
	show := showOf(argv, in.writes)
	name := argv[0]
	if !name.known() {
		c.uncheckable(show, fmt.Sprintf("the program's name (%q) is known only when it runs", name.show))
		return
	}
	switch s := name.String(); {
	case strings.HasPrefix(s, "^"):
		c.uncheckable(show, "a line that starts with ^ runs the previous line again, changed")
		return
	case strings.HasPrefix(s, "="):
		c.uncheckable(show, "zsh runs =name as the program found for name")
		return
	}
	c.deny(argv, in)
	prog := path.Base(name.String())
	if why := refused(prog, argv); why != "" {
		c.uncheckable(show, why)
		return
	}
	r := runs(prog, argv, in)
	if r.why != "" {
		c.uncheckable(show, r.why)
		return
	}
	if !r.through || r.inner == nil && r.script == nil && len(in.writes) > 0 {
		c.allow(argv, in)
	}
	for _, s := range r.sets {
		if n, ok := nameOf(s); ok {
			c.setVar(n, show)
		}
	}
	c.names(prog, argv, show)
	if c.err != nil {
		return
	}
	sub := in
	if sub.via == "" {
		sub.via = show
	}
	if r.script != nil {
		if !r.script.known() {
			c.uncheckable(show, fmt.Sprintf("the script it runs (%q) is known only when it runs", r.script.show))
			return
		}
		c.script(r.script.String(), sub)
	}
	for _, inner := range r.inner {
		c.command(inner, sub)
	}
}

func showOf(argv []word, writes []redir) string {
	var parts []string
	for _, w := range argv {
		parts = append(parts, w.show)
	}
	for _, r := range writes {
		parts = append(parts, r.op, r.target.show)
	}
	return strings.Join(parts, " ")
}

func viaOf(in ctx) string {
	if in.via == "" {
		return ""
	}
	return fmt.Sprintf(" (run by %q)", in.via)
}

// deny refuses argv when a deny pattern matches any form of it, for any
// value of what is known only when it runs, with its redirections or
// without.
func (c *checker) deny(argv []word, in ctx) {
	if c.err != nil || len(c.p.deny) == 0 {
		return
	}
	forms, _ := forms(argv)
	for _, pat := range c.p.deny {
		for _, f := range forms {
			if matches(pat, textOf(f, nil), true) || len(in.writes) > 0 && matches(pat, textOf(f, in.writes), true) {
				c.refuse("the command %q%s matches --deny-command %q: this MCP server may not run it", showOf(argv, in.writes), viaOf(in), pat)
				return
			}
		}
	}
}

// allow refuses argv, with the redirections that make it write files,
// unless an allow pattern matches a form of it whatever the unknown parts
// turn out to be.
func (c *checker) allow(argv []word, in ctx) {
	if c.err != nil || !c.p.Restricts() {
		return
	}
	_, forms := forms(argv)
	bare := false // a pattern allows it but for its writes
	for _, pat := range c.p.allow {
		for _, f := range forms {
			if matches(pat, textOf(f, in.writes), false) {
				return
			}
			bare = bare || matches(pat, textOf(f, nil), false)
		}
	}
	show := showOf(argv, in.writes)
	if bare {
		var like []string
		if len(argv) > 0 {
			like = append(like, argv[0].show, "*")
		}
		for _, r := range in.writes {
			like = append(like, r.op, "*")
		}
		c.refuse("the command %q%s writes a file through a redirection, which --allow-command allows only with a pattern that spells the redirection out, such as %q (the patterns: %s)",
			show, viaOf(in), strings.Join(like, " "), quoteList(c.p.allow))
		return
	}
	c.refuse("the command %q%s matches no --allow-command pattern (%s): this MCP server may run only those", show, viaOf(in), quoteList(c.p.allow))
}

// forms are the ways patterns see argv: as given; with the program
// without its directory (/bin/rm as rm); and for git, without git's own
// options before the subcommand (git -C dir push as git push). Deny
// patterns see all of them; allow patterns not the git form that skipped
// -c, --config-env or --exec-path, with which git runs any command.
func forms(argv []word) (deny, allow [][]word) {
	deny = [][]word{argv}
	if len(argv) == 0 {
		return deny, deny
	}
	prog := argv[0].String()
	names := []word{argv[0]}
	if base := path.Base(prog); base != prog && strings.Contains(prog, "/") {
		names = append(names, lit(base))
		deny = append(deny, append([]word{lit(base)}, argv[1:]...))
	}
	allow = slices.Clone(deny)
	if path.Base(prog) == "git" {
		if rest, safe := gitCommand(argv); rest != nil {
			for _, n := range names {
				f := append([]word{n}, rest...)
				deny = append(deny, f)
				if safe {
					allow = append(allow, f)
				}
			}
		}
	}
	return deny, allow
}

// gitCommand is what follows git's own options (nil when there are
// none), and whether they are ones that run nothing.
func gitCommand(argv []word) ([]word, bool) {
	safe := true
	i := 1
	for ; i < len(argv); i++ {
		a := argv[i]
		if !a.known() {
			break
		}
		s := a.String()
		if len(s) < 2 || s[0] != '-' {
			break
		}
		name, _, _ := strings.Cut(s, "=")
		switch name {
		case "-c", "--config-env", "--exec-path":
			safe = false
		}
		switch s {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--attr-source":
			i++
		}
	}
	if i == 1 {
		return nil, false
	}
	return argv[min(i, len(argv)):], safe
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
