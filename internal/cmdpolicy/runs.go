package cmdpolicy

import (
	"slices"
	"strings"
)

// run is what a command runs in turn.
type run struct {
	inner  [][]word // the commands it runs (env rm x: rm x)
	script *word    // or the shell script it runs (sh -c SCRIPT)
	// through: it runs them in its own place and does nothing else (exec,
	// command, builtin, sh -c), so only they are held to the allow
	// patterns. Any other wrapper (env, nice, sudo, xargs ...) must be
	// allowed itself, and what it runs too.
	through bool
	sets    []word // NAME=value it puts in their environment
	why     string // what it runs cannot be known: the refusal
}

// refused says why prog cannot be checked under any pattern: it runs what
// the line does not show, or changes what a command name means.
func refused(prog string, argv []word) string {
	switch prog {
	case "eval":
		return "eval runs a string as a command, and what it runs is known only then; run the command itself"
	case "source", ".":
		return prog + " runs the commands of a file, which this policy cannot read"
	case "alias":
		if len(argv) > 1 {
			return "an alias gives a name to other commands, which the policy cannot follow on this line or a later one"
		}
	case "fc":
		if !flagged(argv, 'l') {
			return "fc runs earlier commands again"
		}
	case "r":
		return "zsh's and ksh's r runs the previous command again"
	case "hash":
		if flagged(argv, 'p') {
			return "hash -p makes a command name run another program"
		}
	case "enable":
		if flagged(argv, 'f') {
			return "enable -f loads a builtin from a shared library"
		}
	case "bind":
		if flagged(argv, 'x') {
			return "bind -x runs a command on a key"
		}
	case "complete", "compgen", "mapfile", "readarray":
		if flagged(argv, 'C') {
			return prog + " -C runs a string as a command"
		}
	}
	return ""
}

// flagged reports whether a short option ch is among argv's options.
func flagged(argv []word, ch byte) bool {
	for _, a := range argv[1:] {
		s := a.String()
		if s == "--" {
			return false
		}
		if len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.IndexByte(s[1:], ch) >= 0 {
			return true
		}
	}
	return false
}

// shells are the programs whose -c script is bash enough to read, and
// foreign the shells whose scripts are not.
var (
	shells  = set("sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "ash", "posh", "yash", "rbash", "osh")
	foreign = set("fish", "csh", "tcsh", "nu", "pwsh", "powershell", "elvish", "xonsh", "rc", "es")
)

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// runs tells what prog runs in turn.
func runs(prog string, argv []word, in ctx) run {
	switch {
	case shells[prog]:
		return shell(prog, argv, in)
	case foreign[prog]:
		for _, a := range argv[1:] {
			if !a.known() || strings.HasPrefix(a.String(), "-") {
				return run{why: prog + "'s options may give it a script in its own language, which this policy cannot read"}
			}
		}
		return run{}
	}
	switch prog {
	case "exec":
		return wrap(argv, opts{arg: "a"}, 0, true).run
	case "command":
		r := wrap(argv, opts{}, 0, true)
		if r.flags.has("vV") { // it only looks the name up
			return run{}
		}
		return r.run
	case "builtin", "noglob", "nocorrect":
		return wrap(argv, opts{}, 0, true).run
	case "repeat": // zsh: repeat N command
		return wrap(argv, opts{}, 1, true).run
	case "time":
		return wrap(argv, opts{arg: "fo", long: []string{"format", "output"}}, 0, false).run
	case "nice":
		return wrap(argv, opts{arg: "n", long: []string{"adjustment"}}, 0, false).run
	case "nohup", "setsid":
		return wrap(argv, opts{}, 0, false).run
	case "timeout":
		return wrap(argv, opts{arg: "sk", long: []string{"signal", "kill-after"}}, 1, false).run
	case "stdbuf":
		return wrap(argv, opts{arg: "ioe", long: []string{"input", "output", "error"}}, 0, false).run
	case "ionice":
		return wrap(argv, opts{arg: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}, stop: "pPu", stopLong: []string{"pid", "pgid", "uid"}}, 0, false).run
	case "chrt":
		return wrap(argv, opts{arg: "TPD", long: []string{"sched-runtime", "sched-period", "sched-deadline"}, stop: "pm", stopLong: []string{"pid", "max"}}, 1, false).run
	case "taskset":
		return wrap(argv, opts{stop: "p", stopLong: []string{"pid"}}, 1, false).run
	case "doas":
		return wrap(argv, opts{arg: "aCu", stop: "CL"}, 0, false).run
	case "sudo":
		r := wrap(argv, opts{arg: "CDgpRrtTUu", long: []string{"close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type", "command-timeout", "other-user", "user"},
			stop: "elVvKh", stopLong: []string{"edit", "list", "version", "validate", "remove-timestamp", "help"}, sets: true}, 0, false)
		return r.run
	case "env":
		r := wrap(argv, opts{arg: "uCSP", long: []string{"unset", "chdir", "split-string"}, sets: true}, 0, false)
		if r.flags.has("S", "split-string") {
			return run{why: "env -S splits a string into a command; give the command as words"}
		}
		if r.flags.has("P") {
			return run{why: "env -P looks the program up in other directories"}
		}
		return r.run
	case "xargs":
		return xargs(argv)
	case "find":
		return find(argv)
	case "watch":
		r := wrap(argv, opts{arg: "nq", optional: "d", long: []string{"interval", "equexit"}}, 0, false)
		if r.flags.has("x", "exec") || r.why != "" || r.inner == nil {
			return r.run
		}
		s := join(r.inner[0]) // watch runs its words with sh -c
		return run{script: &s}
	case "flock":
		r := wrap(argv, opts{arg: "Ew", long: []string{"conflict-exit-code", "timeout", "wait"}}, 1, false)
		if r.inner != nil {
			if cmd := r.inner[0]; cmd[0].known() && (cmd[0].String() == "-c" || cmd[0].String() == "--command") {
				if len(cmd) < 2 {
					return run{}
				}
				return run{script: &cmd[1]}
			}
		}
		return r.run
	case "su", "script":
		// su USER -c LINE, script -c LINE: the line is run by a shell.
		for i, a := range argv[1:] {
			switch s := a.String(); {
			case !a.known() && i+2 < len(argv):
				return run{why: prog + "'s options are known only when it runs"}
			case (s == "-c" || s == "--command") && i+2 < len(argv):
				return run{script: &argv[i+2]}
			case strings.HasPrefix(s, "--command="):
				w := lit(strings.TrimPrefix(s, "--command="))
				return run{script: &w}
			}
		}
		return run{}
	case "busybox", "toybox":
		if len(argv) > 1 && !strings.HasPrefix(argv[1].String(), "-") {
			return run{inner: [][]word{argv[1:]}}
		}
	case "trap":
		// trap ACTION SIGNAL...: the action is a script run later.
		r := wrap(argv, opts{}, 0, false)
		if r.why != "" || r.inner == nil {
			return r.run
		}
		ops := r.inner[0]
		if len(ops) >= 2 && !(ops[0].known() && ops[0].String() == "-") {
			return run{script: &ops[0]}
		}
		return run{}
	}
	return run{}
}

// shell: sh -c SCRIPT is the script; a shell reading its commands from a
// pipe or a redirection runs what the line does not show; any other
// shell (interactive, or running a script file) is a program like any.
func shell(prog string, argv []word, in ctx) run {
	dashC, stdin := false, false
	i := 1
loop:
	for ; i < len(argv); i++ {
		a := argv[i]
		if !a.known() {
			if dashC { // the script
				break loop
			}
			return run{why: prog + "'s options are known only when it runs"}
		}
		s := a.String()
		switch {
		case s == "--" || s == "-":
			i++
			break loop
		case strings.HasPrefix(s, "--"):
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
		case len(s) > 1 && (s[0] == '-' || s[0] == '+'):
			for _, ch := range s[1:] {
				switch ch {
				case 'c':
					dashC = true
				case 's':
					stdin = true
				case 'o', 'O':
					i++
				}
			}
		default:
			break loop
		}
	}
	switch {
	case dashC && i < len(argv):
		return run{script: &argv[i], through: true}
	case dashC:
		return run{through: true} // sh -c with no script runs nothing
	case (stdin || i >= len(argv)) && in.input:
		return run{why: prog + " reads its commands from its input, which this policy cannot see; give them with -c"}
	}
	return run{}
}

// opts describes a wrapper's options.
type opts struct {
	arg      string   // short options followed by a value (nice -n 5)
	optional string   // short options whose value, if any, is attached (xargs -i{})
	long     []string // long options followed by a value unless written --name=value
	stop     string   // short options with which it runs no command (command -v)
	stopLong []string
	sets     bool // NAME=value operands come before the command (env, sudo)
}

// flags are the options seen, and their values.
type flags struct {
	short string
	long  []string
	vals  map[string]word
}

// has reports whether any of the short options in short, or the long
// ones, was given.
func (f flags) has(short string, long ...string) bool {
	if strings.ContainsAny(f.short, short) {
		return true
	}
	for _, l := range long {
		if slices.Contains(f.long, l) {
			return true
		}
	}
	return false
}

type wrapped struct {
	run
	flags flags
}

// wrap reads a wrapper's options, skips positional operands before the
// command (timeout's duration) and the NAME=value ones, and gives the
// command that is left as what it runs.
func wrap(argv []word, o opts, positional int, through bool) wrapped {
	fl := flags{vals: map[string]word{}}
	i := 1
	value := func(key string, at int) {
		if at < len(argv) {
			fl.vals[key] = argv[at]
		}
	}
loop:
	for ; i < len(argv); i++ {
		a := argv[i]
		if !a.known() {
			// An unknown word before the last may be an option that moves
			// the command (timeout $opt 5 rm): which one runs is unknown.
			if strings.HasPrefix(a.show, "-") || i+1 < len(argv) {
				return wrapped{run: run{why: argv[0].String() + "'s options are known only when it runs"}, flags: fl}
			}
			break
		}
		s := a.String()
		switch {
		case s == "--":
			i++
			break loop
		case len(s) < 2 || s[0] != '-':
			break loop
		case s[1] == '-':
			name, v, eq := strings.Cut(s[2:], "=")
			fl.long = append(fl.long, name)
			if eq {
				fl.vals[name] = lit(v)
			} else if slices.Contains(o.long, name) {
				i++
				value(name, i)
			}
		default:
			for k := 1; k < len(s); k++ {
				ch := s[k]
				fl.short += string(ch)
				if strings.IndexByte(o.optional, ch) >= 0 {
					fl.vals[string(ch)] = lit(s[k+1:])
					break
				}
				if strings.IndexByte(o.arg, ch) >= 0 {
					if k+1 < len(s) {
						fl.vals[string(ch)] = lit(s[k+1:])
					} else {
						i++
						value(string(ch), i)
					}
					break
				}
			}
		}
	}
	w := wrapped{run: run{through: through}, flags: fl}
	if fl.has(o.stop, o.stopLong...) {
		return wrapped{flags: fl}
	}
	i = min(i+positional, len(argv))
	for o.sets && i < len(argv) {
		if _, ok := nameOf(argv[i]); !ok || !strings.ContainsRune(argv[i].String(), '=') {
			break
		}
		w.sets = append(w.sets, argv[i])
		i++
	}
	if i < len(argv) {
		w.inner = [][]word{argv[i:]}
	}
	return w
}

// xargs runs its command (echo without one) with what it reads as more
// arguments, or put in place of -I's string.
func xargs(argv []word) run {
	w := wrap(argv, opts{arg: "adEILnPs", optional: "eil", long: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}}, 0, false)
	if w.why != "" {
		return w.run
	}
	cmd := []word{lit("echo")}
	if w.inner != nil {
		cmd = w.inner[0]
	}
	input := word{text: []rune{unknown}, show: "…"}
	repl, replacing := w.flags.vals["I"]
	for _, k := range []string{"i", "replace"} {
		if v, ok := w.flags.vals[k]; ok && !replacing {
			repl, replacing = v, true
			if len(v.text) == 0 {
				repl = lit("{}")
			}
		}
	}
	if !replacing && w.flags.has("", "replace") {
		repl, replacing = lit("{}"), true
	}
	if !replacing {
		return run{inner: [][]word{append(slices.Clip(cmd), input)}}
	}
	if !repl.known() {
		return run{why: "xargs -I's string is known only when it runs"}
	}
	out := slices.Clone(cmd)
	for i, a := range out {
		if !a.known() || strings.Contains(a.String(), repl.String()) {
			var b wordBuilder
			b.unknown(a.show)
			out[i] = b.word()
		}
	}
	return run{inner: [][]word{out}}
}

// find runs the commands of its -exec, -execdir, -ok and -okdir, with
// {} in place of each file.
func find(argv []word) run {
	var r run
	unknownBefore := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !a.known() {
			unknownBefore = true
			continue
		}
		switch a.String() {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(argv) && !(argv[j].known() && (argv[j].String() == ";" || argv[j].String() == "+")) {
				j++
			}
			cmd := slices.Clone(argv[i+1 : j])
			for k, w := range cmd {
				if w.known() && strings.Contains(w.String(), "{}") {
					var b wordBuilder
					b.unknown(w.show)
					cmd[k] = b.word()
				}
			}
			if len(cmd) > 0 {
				r.inner = append(r.inner, cmd)
			}
			i = j
		case ";", "+":
			if unknownBefore { // find . $x rm {} ';' with x=-exec
				return run{why: "find's expression is known only when it runs, and it may run a command"}
			}
		}
	}
	return r
}
