package mcp

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"termkeep/internal/api"
	"termkeep/internal/cmdpolicy"
)

// Scope is what an MCP server may do on the owner's behalf (`termkeep mcp
// --workspace, --read-only, --allow-command, --deny-command,
// --env-allow`). Its zero value is the owner's whole reach but for the
// environment: children get only DefaultEnv. Its methods decide and do
// no I/O; the tools ask them before they act.
//
// A scope keeps an agent to what it was given through MCP. It is no
// boundary against a program the agent runs: a shell in a session can
// read the owner's token in the state directory and reach everything
// (docs/agents.md).
type Scope struct {
	// Workspace, when set, is the only workspace whose sessions the tools
	// see, and the one the sessions they create join.
	Workspace string
	// ReadOnly leaves out every tool that types, creates, ends or
	// otherwise changes something.
	ReadOnly bool
	// Commands are the allow and deny patterns for what a session is
	// started with (nil: anything).
	Commands *cmdpolicy.Policy
	// EnvAllow names the variables of this process's environment that
	// children get beyond DefaultEnv: a name, a prefix ending in * (AWS_*),
	// or * for all of them.
	EnvAllow []string
}

// DefaultEnv are the variables children get from the MCP server's
// environment without --env-allow: who and where the user is, how text
// is read and written, nothing that grants anything.
var DefaultEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "COLORTERM", "TZ", "TMPDIR", "EDITOR", "VISUAL", "PAGER"}

var envPattern = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*\*?|\*)$`)

// Check reports what is wrong with the scope's settings, as a sentence
// naming the flag.
func (sc Scope) Check() error {
	if sc.Workspace != "" {
		if p := api.NameProblem(sc.Workspace); p != "" {
			return fmt.Errorf("--workspace %q is not a workspace name: %s", sc.Workspace, p)
		}
	}
	for _, n := range sc.EnvAllow {
		if !envPattern.MatchString(n) {
			return fmt.Errorf("--env-allow %q is not a variable name (letters, digits and _), a prefix ending in * (AWS_*), or *", n)
		}
	}
	return nil
}

// note tells a model what the scope withholds, after the server's
// instructions.
func (sc Scope) note() string {
	var b strings.Builder
	if sc.Workspace != "" {
		fmt.Fprintf(&b, "\nThis server sees only the sessions of workspace %s, and its new sessions join it.", sc.Workspace)
	}
	if sc.ReadOnly {
		b.WriteString("\nThis server is read-only: it lists, reads and waits for sessions, and cannot create, type into or end them.")
	}
	if !sc.Commands.Empty() {
		b.WriteString("\nOnly some commands may be started here; a refused one is answered with the patterns it failed.")
	}
	return b.String()
}

// Tool refuses a tool that writes (readOnly false) under ReadOnly.
func (sc Scope) Tool(name string, readOnly bool) error {
	if sc.ReadOnly && !readOnly {
		return fmt.Errorf("%s is not available: this MCP server runs with --read-only, so it can list, read and wait for sessions but not create, type into or end them", name)
	}
	return nil
}

// Visible reports whether the tools may see s at all.
func (sc Scope) Visible(s api.Session) bool {
	return sc.Workspace == "" || s.Workspace == sc.Workspace
}

// Session decides whether a tool may act on what ref resolved to (nil:
// nothing). A session outside the workspace is answered exactly as one
// that does not exist: the scope does not tell what lies beyond it.
func (sc Scope) Session(ref string, s *api.Session) error {
	if s != nil && sc.Visible(*s) {
		return nil
	}
	if sc.Workspace == "" {
		return fmt.Errorf("no session %q (list_sessions shows every session)", ref)
	}
	return fmt.Errorf("no session %q in workspace %s (this MCP server sees only that workspace; list_sessions shows its sessions)", ref, sc.Workspace)
}

// ListWorkspace is the workspace list_sessions shows, given the one asked
// for ("" for all).
func (sc Scope) ListWorkspace(asked string) (string, error) {
	if ws, ok := sc.workspace(asked); ok {
		return ws, nil
	}
	return "", fmt.Errorf("this MCP server sees only workspace %s, not %s", sc.Workspace, asked)
}

// CreateWorkspace is the workspace a new session joins, given the one
// asked for.
func (sc Scope) CreateWorkspace(asked string) (string, error) {
	if ws, ok := sc.workspace(asked); ok {
		return ws, nil
	}
	return "", fmt.Errorf("this MCP server creates sessions only in workspace %s; leave workspace out, or give %s", sc.Workspace, sc.Workspace)
}

// workspace is the one a tool works in when asked for asked, and whether
// the scope lets it.
func (sc Scope) workspace(asked string) (string, bool) {
	switch {
	case sc.Workspace == "":
		return asked, true
	case asked == "" || asked == sc.Workspace:
		return sc.Workspace, true
	}
	return "", false
}

// Command checks what a new session starts with: argv, or with none the
// shell (env's SHELL, else /bin/sh) that the termkeep server starts then.
func (sc Scope) Command(argv, env []string) error {
	if sc.Commands.Empty() {
		return nil
	}
	if len(argv) == 0 {
		sh := "/bin/sh"
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "SHELL="); ok && v != "" {
				sh = v
			}
		}
		argv = []string{sh}
	}
	return sc.Commands.CheckArgv(argv)
}

// shells are the programs that run what is typed into them as commands.
var shells = []string{"sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "pdksh", "oksh", "yash", "tcsh", "csh", "busybox", "ash", "rbash", "elvish", "nu", "xonsh", "pwsh"}

// Input decides whether send_input may type into s. Under allow patterns
// it may not type into a shell: a line typed at its prompt would run
// unchecked, where run_command checks it first.
func (sc Scope) Input(s api.Session) error {
	if !sc.Commands.Restricts() {
		return nil
	}
	prog := "the default shell"
	if len(s.Command) > 0 {
		prog = path.Base(s.Command[0])
		if !slices.Contains(shells, strings.TrimPrefix(prog, "-")) {
			return nil
		}
	}
	return fmt.Errorf("send_input cannot type into a shell (%s) under --allow-command: a line typed at its prompt runs unchecked; use run_command, whose command the patterns check", prog)
}

// CommandLine checks a shell command line typed into a session to run it.
func (sc Scope) CommandLine(line string) error {
	return sc.Commands.CheckLine(line)
}

// ChildEnv is the part of environ (KEY=VALUE) that children get: the
// variables DefaultEnv and EnvAllow name.
func (sc Scope) ChildEnv(environ []string) []string {
	names := append(slices.Clone(DefaultEnv), sc.EnvAllow...)
	out := []string{}
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		for _, n := range names {
			if p, star := strings.CutSuffix(n, "*"); star && strings.HasPrefix(k, p) || !star && k == n {
				out = append(out, kv)
				break
			}
		}
	}
	return out
}
