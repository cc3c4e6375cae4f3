package cmdpolicy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// dangerous are the variables that make the shell, the dynamic linker or
// a common tool load or run other code than the command names: set before
// an allowed command (or for the commands after it), they would turn it
// into another. LD_*, DYLD_* and GIT_* are prefixes.
var dangerous = set("BASH_ENV", "ENV", "PATH", "IFS", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS",
	"PS0", "PS1", "PS2", "PS3", "PS4", "BASH_LOADABLES_PATH", "ZDOTDIR", "EXECIGNORE",
	"PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS", "SUDO_ASKPASS",
	"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PERL5LIB", "PERL5OPT", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "NODE_PATH")

func isDangerous(name string) bool {
	return dangerous[name] || strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") || strings.HasPrefix(name, "GIT_")
}

// setVar checks an assignment to name (a[i] for an array's element),
// shown as shown.
func (c *checker) setVar(name, shown string) {
	base, sub, indexed := strings.Cut(name, "[")
	switch {
	case base == "BASH_ALIASES" || base == "BASH_CMDS":
		c.uncheckable(shown, base+" gives a command name another meaning, which the policy cannot follow")
	case !c.p.Restricts():
	case isDangerous(base):
		c.refuse("%q sets %s, which can make a command run other code than it names: --allow-command refuses it", shown, base)
	case indexed && !isDigits(strings.TrimSuffix(sub, "]")):
		c.refuse("%q: bash reads an array's subscript as arithmetic, which runs a command hidden in a variable's value: --allow-command refuses it", shown)
	}
}

// nameOf is the variable a NAME=value word (or a bare NAME) names.
func nameOf(w word) (string, bool) {
	t := w.text
	for i, r := range t {
		if r == '=' {
			t = t[:i]
			break
		}
	}
	for _, r := range t {
		if r == unknown {
			return "", false
		}
	}
	n := strings.TrimSuffix(string(t), "+")
	base, _, _ := strings.Cut(n, "[")
	if !isName(base) {
		return "", false
	}
	return n, true
}

func isName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// names checks, under allow patterns, the variables the builtins that set
// one by name are given (declare, read, printf -v ...): set where a later
// command reads them, they turn it into another.
func (c *checker) names(prog string, argv []word, show string) {
	if !c.p.Restricts() || c.err != nil {
		return
	}
	var names []word
	switch prog {
	case "declare", "typeset", "local", "export", "readonly", "nameref":
		for _, a := range argv[1:] {
			if s := a.String(); a.known() && (strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+")) {
				if prog != "export" && strings.ContainsAny(s, "in") {
					c.refuse("%q: a variable that is an integer (-i) or a reference (-n) evaluates or redirects what is assigned to it: --allow-command refuses it", show)
					return
				}
				continue
			}
			names = append(names, a)
		}
	case "read":
		w := wrap(argv, opts{arg: "adinNptu"}, 0, false)
		if w.inner != nil {
			names = w.inner[0]
		}
		if a, ok := w.flags.vals["a"]; ok {
			names = append(names, a)
		}
	case "printf":
		if len(argv) > 2 && argv[1].known() && argv[1].String() == "-v" {
			names = argv[2:3]
		}
	case "getopts":
		if len(argv) > 2 {
			names = argv[2:3]
		}
	case "mapfile", "readarray":
		if w := wrap(argv, opts{arg: "dnOsuCc"}, 0, false); w.inner != nil {
			names = w.inner[0][:1]
		}
	case "unset", "test", "[":
		// Only an element's subscript matters here: unset 'a[$(cmd)]'.
		for _, a := range argv[1:] {
			if !a.known() || strings.Contains(a.String(), "[") && a.String() != "[" {
				names = append(names, a)
			}
		}
	}
	for _, n := range names {
		if n.known() && n.String() == "]" {
			continue
		}
		name, ok := nameOf(n)
		if !ok {
			c.refuse("%q sets a variable whose name is known only when it runs: --allow-command refuses it", show)
			return
		}
		if n.known() && strings.ContainsRune(n.String(), '[') {
			name, _, _ = strings.Cut(n.String(), "=")
		}
		c.setVar(name, show)
	}
}

// arithmetic refuses, under allow patterns, arithmetic that reads a
// variable: bash evaluates the value as an expression, and a value such
// as a[$(cmd)] runs cmd. Numbers alone are fine.
func (c *checker) arithmetic(n syntax.Node) {
	var exprs []syntax.ArithmExpr
	switch x := n.(type) {
	case *syntax.ArithmExp:
		exprs = append(exprs, x.X)
	case *syntax.ArithmCmd:
		exprs = append(exprs, x.X)
	case *syntax.LetClause:
		exprs = append(exprs, x.Exprs...)
	case *syntax.CStyleLoop:
		exprs = append(exprs, x.Init, x.Cond, x.Post)
	case *syntax.ParamExp:
		if w, ok := x.Index.(*syntax.Word); !ok || w.Lit() != "@" && w.Lit() != "*" {
			exprs = append(exprs, x.Index)
		}
		if x.Slice != nil {
			exprs = append(exprs, x.Slice.Offset, x.Slice.Length)
		}
	case *syntax.Assign:
		exprs = append(exprs, x.Index)
	case *syntax.ArrayElem:
		exprs = append(exprs, x.Index)
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, t := range []syntax.TestExpr{x.X, x.Y} {
				if w, ok := t.(*syntax.Word); ok {
					exprs = append(exprs, w)
				}
			}
		}
	case *syntax.UnaryTest:
		if w, ok := x.X.(*syntax.Word); ok && x.Op == syntax.TsVarSet && !isDigits(w.Lit()) {
			if s := w.Lit(); s == "" || strings.Contains(s, "[") {
				c.refuse("%q: bash reads an array's subscript as arithmetic, which runs a command hidden in a variable's value: --allow-command refuses it", c.source(x))
			}
		}
	}
	for _, e := range exprs {
		if e != nil && readsVar(e) {
			c.refuse("%q does arithmetic on a variable, which runs a command hidden in its value (a[$(cmd)]): --allow-command refuses it; use numbers", c.source(e))
			return
		}
	}
}

// readsVar reports whether e names or expands a variable.
func readsVar(e syntax.ArithmExpr) bool {
	found := false
	syntax.Walk(e, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			found = found || !isNumber(w.Lit())
			return false
		}
		return !found
	})
	return found
}

// isNumber: 10, 0x1f, 2#101.
func isNumber(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '#' || r == '_' || r == '@') {
			return false
		}
	}
	return true
}
