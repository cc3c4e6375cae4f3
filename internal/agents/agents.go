// Package agents is the table of AI coding agents termkeep knows how to
// start and bring back: for each, the command that starts its terminal UI,
// the shell command that resumes its last conversation (what a restore runs
// after a reboot), and how to install it. Adding an agent is adding a row.
package agents

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// Preset is how one agent is started and resumed.
type Preset struct {
	// Name is what `termkeep new --agent NAME` and the MCP create_session
	// tool's agent argument take.
	Name string
	// Binary is the program looked up on PATH before anything is created.
	Binary string
	// Args follow Binary when the session starts (none for all agents now).
	Args []string
	// Resume is the shell command a restore runs instead of the start
	// command: it continues the agent's most recent conversation in the
	// session's directory.
	Resume string
	// Install says how to get Binary, for the error when it is missing.
	Install string
}

// Presets are the known agents. The resume commands are the agents' own
// documented ways to continue the latest conversation of the current
// directory:
//
//   - claude: `claude --continue` (-c) continues the most recent
//     conversation in the directory.
//   - codex: `codex resume --last` resumes the most recent session without
//     the picker.
//   - gemini: `gemini --resume latest` (-r) loads the most recent session of
//     the project (sessions are per directory); a bare `--resume` does the
//     same in newer versions, "latest" works in all that have --resume.
//   - aider: `aider --restore-chat-history` reloads .aider.chat.history.md
//     from the directory.
var Presets = []Preset{
	{Name: "claude", Binary: "claude", Resume: "claude --continue",
		Install: "npm install -g @anthropic-ai/claude-code (see https://docs.anthropic.com/en/docs/claude-code)"},
	{Name: "codex", Binary: "codex", Resume: "codex resume --last",
		Install: "npm install -g @openai/codex (see https://github.com/openai/codex)"},
	{Name: "gemini", Binary: "gemini", Resume: "gemini --resume latest",
		Install: "npm install -g @google/gemini-cli (see https://github.com/google-gemini/gemini-cli)"},
	{Name: "aider", Binary: "aider", Resume: "aider --restore-chat-history",
		Install: "python -m pip install aider-install && aider-install (see https://aider.chat/docs/install.html)"},
}

// Names returns the known agents' names, in table order.
func Names() []string {
	names := make([]string, len(Presets))
	for i, p := range Presets {
		names[i] = p.Name
	}
	return names
}

// Lookup returns the preset called name.
func Lookup(name string) (Preset, error) {
	i := slices.IndexFunc(Presets, func(p Preset) bool { return p.Name == name })
	if i < 0 {
		return Preset{}, fmt.Errorf("unknown agent %q: termkeep knows %s", name, strings.Join(Names(), ", "))
	}
	return Presets[i], nil
}

// Launch is what a session of an agent runs.
type Launch struct {
	// Command starts the agent: its binary as found on PATH, then the
	// preset's arguments and the caller's extra ones.
	Command []string
	// Restore is the shell command a restore runs: the preset's resume
	// command with the extra arguments, quoted for /bin/sh.
	Restore string
}

// Plan finds the agent's binary with lookPath (exec.LookPath, or a stand-in
// in tests) and returns what to run; extra arguments go to both the start
// and the resume command. A missing binary is an error naming it and how to
// install it.
func (p Preset) Plan(extra []string, lookPath func(string) (string, error)) (Launch, error) {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	path, err := lookPath(p.Binary)
	if err != nil {
		return Launch{}, fmt.Errorf("%s is not installed: no %q on PATH; install it with %s", p.Name, p.Binary, p.Install)
	}
	cmd := append(append([]string{path}, p.Args...), extra...)
	restore := p.Resume
	for _, a := range extra {
		restore += " " + shellQuote(a)
	}
	return Launch{Command: cmd, Restore: restore}, nil
}

// shellQuote quotes s for /bin/sh when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
