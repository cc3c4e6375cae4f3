package cmdpolicy

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds scripts within scripts (sh -c "sh -c '...'").
const maxDepth = 8

// checker walks a parsed line and keeps the first refusal.
type checker struct {
	p     *Policy
	src   string // the script being walked, which words are shown from
	depth int    // scripts within scripts so far
	err   error
}

// ctx is what a command inherits from where it stands.
type ctx struct {
	// writes are the redirections that make it write a file: its own and
	// those of the commands around it ({ ...; } > f, sh -c '...' > f).
	writes []redir
	// input: its standard input is a pipe or a redirection, not the
	// terminal (a shell reading it runs commands the line does not show).
	input bool
	// via is the command that runs it (env, sudo, sh -c ...), for messages.
	via string
}

// A redir is a redirection that writes a file.
type redir struct {
	op     string // as written: >, >>, 2>, &>, >|, <>, >&
	target word
}

func (c *checker) refuse(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
}

// uncheckable refuses what cannot be known before the line runs.
func (c *checker) uncheckable(cmd, why string) {
	c.refuse("%q cannot be checked against --allow-command and --deny-command: %s", cmd, why)
}

// script parses src as bash and checks each command in it.
func (c *checker) script(src string, in ctx) {
	if c.err != nil {
		return
	}
	if c.depth >= maxDepth {
		c.uncheckable(src, fmt.Sprintf("scripts nest more than %d deep", maxDepth))
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		c.refuse("%q cannot be read as a bash command line (%s): under --allow-command or --deny-command only a line this server can read runs",
			src, strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	sub := &checker{p: c.p, src: src, depth: c.depth + 1}
	sub.stmts(f.Stmts, in)
	c.err = sub.err
}

func (c *checker) stmts(list []*syntax.Stmt, in ctx) {
	for _, s := range list {
		if c.err != nil {
			return
		}
		c.stmt(s, in)
	}
}

func (c *checker) stmt(s *syntax.Stmt, in ctx) {
	in.writes = slices.Clip(in.writes) // so that appends stay this statement's
	for _, r := range s.Redirs {
		c.scan(r.Word)
		c.scan(r.Hdoc)
		if w, ok := c.writes(r); ok {
			in.writes = append(in.writes, w)
			continue
		}
		switch r.Op {
		case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			if r.N == nil || r.N.Value == "0" {
				in.input = true
			}
		}
	}
	switch x := s.Cmd.(type) {
	case nil: // only redirections: `> f` creates f
		c.command(nil, in)
	case *syntax.CallExpr:
		c.call(x, in)
	case *syntax.BinaryCmd:
		c.stmt(x.X, in)
		if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
			in.input = true
		}
		c.stmt(x.Y, in)
	case *syntax.Subshell:
		c.stmts(x.Stmts, in)
	case *syntax.Block:
		c.stmts(x.Stmts, in)
	case *syntax.IfClause:
		for ; x != nil; x = x.Else {
			c.stmts(x.Cond, in)
			c.stmts(x.Then, in)
		}
	case *syntax.WhileClause:
		c.stmts(x.Cond, in)
		c.stmts(x.Do, in)
	case *syntax.ForClause:
		c.scan(x.Loop)
		if it, ok := x.Loop.(*syntax.WordIter); ok {
			c.setVar(it.Name.Value, it.Name.Value)
		}
		c.stmts(x.Do, in)
	case *syntax.CaseClause:
		c.scan(x.Word)
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				c.scan(p)
			}
			c.stmts(it.Stmts, in)
		}
	case *syntax.FuncDecl:
		// A function is checked where it is defined: its body like any
		// other commands. Its name is free; a call to it is matched by
		// that name, as a program of the name would be.
		c.stmt(x.Body, in)
	case *syntax.ArithmCmd, *syntax.TestClause:
		c.scan(x)
	case *syntax.LetClause:
		c.scan(x)
		argv := []word{lit("let")}
		for _, e := range x.Exprs {
			argv = append(argv, lit(c.source(e)))
		}
		c.command(argv, in)
	case *syntax.DeclClause:
		c.scan(x)
		c.command(c.decl(x), in)
	case *syntax.TimeClause:
		if x.Stmt != nil {
			c.stmt(x.Stmt, in)
		}
	case *syntax.CoprocClause:
		c.scan(x.Name)
		c.stmt(x.Stmt, in)
	default:
		c.uncheckable(c.source(s), fmt.Sprintf("this policy does not know %T", x))
	}
}

func (c *checker) call(x *syntax.CallExpr, in ctx) {
	for _, a := range x.Assigns {
		c.scan(a)
		if a.Name != nil {
			c.setVar(a.Name.Value, c.source(a))
		}
	}
	for _, w := range x.Args {
		c.scan(w)
	}
	if c.err == nil {
		c.command(c.words(x.Args), in)
	}
}

// decl is a declare, export, local ... as the words it runs with.
func (c *checker) decl(x *syntax.DeclClause) []word {
	argv := []word{lit(x.Variant.Value)}
	for _, a := range x.Args {
		switch {
		case a.Name == nil:
			argv = append(argv, c.words([]*syntax.Word{a.Value})...)
		case a.Naked:
			argv = append(argv, lit(c.source(a)))
		default:
			var b wordBuilder
			b.known(a.Name.Value)
			if a.Index != nil {
				b.known("[")
				b.unknown(c.source(a.Index))
				b.known("]")
			}
			b.known(map[bool]string{false: "=", true: "+="}[a.Append])
			if a.Array != nil {
				b.unknown(c.source(a.Array))
			} else {
				c.parts(&b, partsOf(a.Value), false)
			}
			argv = append(argv, b.word())
		}
	}
	return argv
}

func partsOf(w *syntax.Word) []syntax.WordPart {
	if w == nil {
		return nil
	}
	return w.Parts
}

// devices are the files a redirection may write without writing one.
var devices = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true}

// writes reports whether r writes a file, and which.
func (c *checker) writes(r *syntax.Redirect) (redir, bool) {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.RdrAllClob,
		syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut, syntax.DplOut:
	default:
		return redir{}, false
	}
	t := c.word(r.Word)
	if t.known() && (devices[t.String()] || r.Op == syntax.DplOut && (t.String() == "-" || isDigits(t.String()))) {
		return redir{}, false // 2>&1, >&-, > /dev/null
	}
	op := r.Op.String()
	if r.N != nil {
		op = r.N.Value + op
	}
	return redir{op, t}, true
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// scan checks what runs inside n without being a command of the line:
// the commands of $(...), `...` and <(...) anywhere in it, and under
// allow patterns the arithmetic that could run one.
func (c *checker) scan(n syntax.Node) {
	if n == nil || c.err != nil {
		return
	}
	if w, ok := n.(*syntax.Word); ok && w == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		if c.err != nil {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			c.stmts(x.Stmts, ctx{})
			return false
		case *syntax.ProcSubst:
			c.stmts(x.Stmts, ctx{})
			return false
		}
		if c.p.Restricts() {
			c.arithmetic(n)
		}
		return true
	})
}
