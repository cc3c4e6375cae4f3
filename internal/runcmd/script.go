package runcmd

import (
	"fmt"
	"strings"
)

// typedLine is what is typed at the prompt of shell (the base name of the
// session's program) to run spec: one line of printable text, which the
// shell reads as one command line whatever its line editor does.
//
// A command that is one such line, with no cwd or env, is typed as it
// is: the history shows it as written. Anything else is typed as an eval
// of the command quoted as one word ($'...' in bash and zsh, printf %b in
// another POSIX shell, escapes between quotes in fish): typing its
// newlines would run each line at once and show the shell's continuation
// prompts, a tab would complete, and bracketed paste, which would insert
// it whole, is a setting of the user's that may be off. The history then
// holds the eval, which runs the same command again.
//
// With cwd or env the command runs in a subshell (fish has none: in a
// function, which keeps its variables local, and returns to the
// directory it left), so neither outlasts it. cwd is taken by the shell,
// relative to its own directory.
func typedLine(shell string, spec Spec) string {
	if spec.Cwd == "" && len(spec.Env) == 0 && !strings.ContainsFunc(spec.Line, isControl) {
		return spec.Line
	}
	if shell == "fish" {
		return fishLine(spec)
	}
	dollar := shell == "bash" || shell == "zsh"
	q := dollarQuote
	if !dollar {
		// The command substitution drops the command's trailing newlines,
		// which change nothing; a value's are kept below.
		q = func(s string) string { return `"$(printf '%b' ` + shQuote(printfEscape(s)) + `)"` }
	}
	line := "eval " + q(spec.Line)
	if spec.Cwd == "" && len(spec.Env) == 0 {
		return line
	}
	var b strings.Builder
	b.WriteString("(")
	for _, kv := range spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		if dollar {
			fmt.Fprintf(&b, "export %s=%s; ", k, q(v))
		} else {
			// An x after the value keeps its trailing newlines.
			fmt.Fprintf(&b, `%s=$(printf '%%bx' %s); %s=${%s%%x}; export %s; `, k, shQuote(printfEscape(v)), k, k, k)
		}
	}
	if spec.Cwd != "" {
		fmt.Fprintf(&b, "cd -- %s || exit; ", q(spec.Cwd))
	}
	b.WriteString(line + ")")
	return b.String()
}

// fishLine is typedLine for fish.
func fishLine(spec Spec) string {
	line := "eval " + fishQuote(spec.Line)
	if spec.Cwd == "" && len(spec.Env) == 0 {
		return line
	}
	// A function: its variables are local, cd is not.
	var b strings.Builder
	b.WriteString("function __termkeep_run; set -l __termkeep_c $argv[1]; set -e argv; set -l __termkeep_d $PWD; ")
	for _, kv := range spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "set -lx %s %s; ", k, fishQuote(v))
	}
	if spec.Cwd != "" {
		dir := spec.Cwd
		if strings.HasPrefix(dir, "-") {
			dir = "./" + dir
		}
		fmt.Fprintf(&b, "cd %s; and ", fishQuote(dir))
	}
	b.WriteString("eval $__termkeep_c; set -l __termkeep_s $status; cd $__termkeep_d; return $__termkeep_s; end; __termkeep_run " + fishQuote(spec.Line))
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// shQuote quotes s as one word of a POSIX shell; s must hold no control
// characters, which would be typed as keys.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dollarQuote quotes s as one word of bash or zsh: as shQuote when it
// can, else $'...' with control characters as escapes.
func dollarQuote(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return shQuote(s)
	}
	var b strings.Builder
	b.WriteString("$'")
	for _, r := range s {
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("'")
	return b.String()
}

// printfEscape writes s for printf's %b, which reads \\, \n, \t and
// \0NNN.
func printfEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case isControl(r):
			fmt.Fprintf(&b, `\0%03o`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fishQuote quotes s as one word of fish: text in single quotes (where
// only \\ and \' are escapes), control characters as escapes between
// them.
func fishQuote(s string) string {
	var b strings.Builder
	quoted := false
	for _, r := range s {
		if isControl(r) {
			if quoted {
				b.WriteByte('\'')
				quoted = false
			}
			switch r {
			case '\n':
				b.WriteString(`\n`)
			case '\t':
				b.WriteString(`\t`)
			default:
				fmt.Fprintf(&b, `\x%02x`, r)
			}
			continue
		}
		if !quoted {
			b.WriteByte('\'')
			quoted = true
		}
		if r == '\\' || r == '\'' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	if quoted || b.Len() == 0 {
		if !quoted {
			b.WriteByte('\'')
		}
		b.WriteByte('\'')
	}
	return b.String()
}
