// Package agents is the table of AI coding agents termkeep knows how to
// start and bring back: for each, the command that starts its terminal UI,
// how a restore after a reboot continues its conversation, and how to
// install it. Adding an agent is adding a row.
//
// Where an agent takes a conversation id up front, a session of it is
// pinned: termkeep chooses the id, starts the agent with it and resumes
// exactly that conversation, so two sessions of one agent in one directory
// each come back to their own. Where the agent makes its own id and holds
// its conversation's file open (codex), the id is learned from that file
// while the session runs and pinned then. Where neither is possible, a
// restore continues the directory's most recent conversation.
package agents

import (
	"crypto/rand"
	"fmt"
	"os/exec"
	"path/filepath"
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
	// Resume is the shell command a restore runs for a session that is not
	// pinned: it continues the agent's most recent conversation in the
	// session's directory. "" = the session's command again (a fresh
	// start), for an agent whose id is learned (Rollouts).
	Resume string
	// StartFlag and ResumeFlag pin a conversation: the agent starts with
	// StartFlag ID and a restore runs Binary ResumeFlag ID. StartFlag ""
	// = the agent cannot be given an id up front.
	StartFlag, ResumeFlag string
	// Rollouts, for an agent that takes no id up front, is the directory
	// below Store's home where it holds a running conversation's file
	// open, named rollout-<time>-<id>.jsonl in YYYY/MM/DD directories: the
	// id is learned from it after the start (Conversation). "" = never
	// learned.
	Rollouts string
	// Conflicts are the agent's own flags that choose a conversation; a
	// session started with one of them among its extra arguments is not
	// pinned, since the two choices would contradict each other.
	Conflicts []string
	// Store says where the agent records a pinned conversation, so that a
	// restore knows when there is nothing to resume. Nil = not knowable.
	Store *Store
	// Install says how to get Binary, for the error when it is missing.
	Install string
}

// Store is where an agent keeps its conversations: a home directory (the
// value of HomeEnv in the child's environment, else DefaultHome under
// $HOME) and, below it, a glob pattern naming one conversation's file,
// with {id} for its id.
type Store struct {
	HomeEnv     string
	DefaultHome string
	Pattern     string
}

// Presets are the known agents, each resumed by its own documented means:
//
//   - claude: `claude --session-id UUID` starts a conversation with that
//     id and `claude --resume UUID` continues it. Conversations are
//     recorded, once the first message is sent, in
//     $CLAUDE_CONFIG_DIR (default ~/.claude)/projects/<directory>/UUID.jsonl.
//   - codex: takes no id up front; it makes its own and records the
//     conversation in $CODEX_HOME (default ~/.codex)/sessions/YYYY/MM/DD/
//     rollout-<time>-UUID.jsonl, which it holds open while the
//     conversation runs. The server learns the id from that open file
//     (Conversation) and a restore runs `codex resume UUID`; before it is
//     learned, a restore starts codex afresh (never `resume --last`, which
//     would give two sessions in one directory the same conversation).
//   - gemini: `gemini --session-id UUID` (Gemini CLI from April 2026) and
//     `gemini --resume UUID`. Where its chat files are named after the id
//     is not documented, so a restore always tries to resume.
//   - aider: no conversation ids; `aider --restore-chat-history` reloads
//     .aider.chat.history.md from the directory.
var Presets = []Preset{
	{Name: "claude", Binary: "claude", Resume: "claude --continue",
		StartFlag: "--session-id", ResumeFlag: "--resume",
		Conflicts: []string{"--session-id", "--resume", "-r", "--continue", "-c", "--fork-session"},
		Store:     &Store{HomeEnv: "CLAUDE_CONFIG_DIR", DefaultHome: ".claude", Pattern: "projects/*/{id}.jsonl"},
		Install:   "npm install -g @anthropic-ai/claude-code (see https://docs.anthropic.com/en/docs/claude-code)"},
	{Name: "codex", Binary: "codex", ResumeFlag: "resume", Rollouts: "sessions",
		Conflicts: []string{"resume", "fork"},
		Store:     &Store{HomeEnv: "CODEX_HOME", DefaultHome: ".codex", Pattern: "sessions/*/*/*/rollout-*-{id}.jsonl"},
		Install:   "npm install -g @openai/codex (see https://github.com/openai/codex)"},
	{Name: "gemini", Binary: "gemini", Resume: "gemini --resume latest",
		StartFlag: "--session-id", ResumeFlag: "--resume",
		Conflicts: []string{"--session-id", "--resume", "-r"},
		Install:   "npm install -g @google/gemini-cli (see https://github.com/google-gemini/gemini-cli)"},
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
	// preset's arguments, the pinning flag and id, and the caller's extra
	// ones. Run again, it starts a new conversation under the same id.
	Command []string
	// Restore is the shell command a restore runs: the pinned resume, or
	// the preset's resume command, with the extra arguments quoted for
	// /bin/sh.
	Restore string
	// Conversation is the pinned conversation's id, "" when not pinned.
	Conversation string
}

// Plan finds the agent's binary with lookPath (exec.LookPath, or a stand-in
// in tests) and returns what to run, pinned to a new random id when the
// agent allows it; extra arguments go to both the start and the resume
// command. A missing binary is an error naming it and how to install it.
func (p Preset) Plan(extra []string, lookPath func(string) (string, error)) (Launch, error) {
	return p.plan(extra, lookPath, newID())
}

// plan is Plan with the id to pin given.
func (p Preset) plan(extra []string, lookPath func(string) (string, error), id string) (Launch, error) {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	path, err := lookPath(p.Binary)
	if err != nil {
		return Launch{}, fmt.Errorf("%s is not installed: no %q on PATH; install it with %s", p.Name, p.Binary, p.Install)
	}
	cmd := append([]string{path}, p.Args...)
	if !p.pinnable(extra) || p.StartFlag == "" {
		id = ""
	}
	var restore string
	switch {
	case id != "":
		cmd = append(cmd, p.StartFlag, id)
		restore = p.resumeCommand(id, extra)
	case p.Resume != "":
		restore = p.Resume + quoteArgs(extra)
	}
	cmd = append(cmd, extra...)
	return Launch{Command: cmd, Restore: restore, Conversation: id}, nil
}

// resumeCommand is the shell command that resumes conversation id, with
// the session's extra arguments.
func (p Preset) resumeCommand(id string, extra []string) string {
	return shellQuote(p.Binary) + " " + p.ResumeFlag + " " + shellQuote(id) + quoteArgs(extra)
}

// quoteArgs is args quoted for /bin/sh, each after a blank.
func quoteArgs(args []string) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteString(" " + shellQuote(a))
	}
	return b.String()
}

// pinnable reports whether a session with these extra arguments can be
// pinned: the agent takes an id, and the arguments choose no conversation
// of their own (`--resume X`, `--resume=X`, `-c`).
func (p Preset) pinnable(extra []string) bool {
	if p.ResumeFlag == "" || p.StartFlag == "" && p.Rollouts == "" {
		return false
	}
	for _, a := range extra {
		name, _, _ := strings.Cut(a, "=")
		if slices.Contains(p.Conflicts, name) {
			return false
		}
	}
	return true
}

// Recorded says whether the agent has recorded the conversation id, for a
// child with environment env (where HomeEnv and HOME are looked up), using
// glob (filepath.Glob, or a stand-in in tests). known is false when the
// preset does not say where conversations are kept or env has no home:
// then nobody can tell, and a restore tries to resume.
func (p Preset) Recorded(id string, env []string, glob func(string) ([]string, error)) (found, known bool) {
	if p.Store == nil || !validID(id) {
		return false, false
	}
	if glob == nil {
		glob = filepath.Glob
	}
	home := p.home(env)
	if home == "" {
		return false, false
	}
	pattern := filepath.Join(glob0(home), strings.ReplaceAll(p.Store.Pattern, "{id}", id))
	matches, err := glob(pattern)
	if err != nil {
		return false, false
	}
	return len(matches) > 0, true
}

// home is where the agent keeps its conversations for a child with
// environment env: HomeEnv's value, else DefaultHome under HOME; "" when
// that is no absolute path (nobody can tell where a relative one is).
func (p Preset) home(env []string) string {
	home := lookupEnv(env, p.Store.HomeEnv)
	if home == "" {
		if h := lookupEnv(env, "HOME"); h != "" {
			home = filepath.Join(h, p.Store.DefaultHome)
		}
	}
	if !filepath.IsAbs(home) {
		return ""
	}
	return home
}

// FreshStart decides a restore of a session pinned to conversation id: it
// returns the note to show when the agent has no such conversation (it
// was never sent a message), and the restore starts the agent afresh
// under the same id; "" when the restore resumes it (also when that
// cannot be known).
func (p Preset) FreshStart(id string, env []string, glob func(string) ([]string, error)) string {
	if found, known := p.Recorded(id, env, glob); found || !known {
		return ""
	}
	return fmt.Sprintf("%s has no conversation %s to resume; starting a new one", p.Name, id)
}

// CheckConversation says what is wrong with a conversation id given from
// outside (the API), nil when it has the form of one termkeep makes.
func CheckConversation(id string) error {
	if !validID(id) {
		return fmt.Errorf("conversation id %q is not a lowercase UUID (such as 0b6f3c2e-8d4a-4f1e-9c3b-5a7d2e1f0a9b)", id)
	}
	return nil
}

// validID is what a conversation id termkeep made looks like (a UUID's
// characters): an id from a damaged registry row is not put into a glob
// pattern, a path or a command line.
func validID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r == '-') {
			return false
		}
	}
	return true
}

// glob0 escapes the glob metacharacters of a literal path.
func glob0(path string) string {
	var b strings.Builder
	for _, r := range path {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// lookupEnv returns the last value of name in env ("" when absent).
func lookupEnv(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// newID returns a random (version 4) UUID, the form claude requires of
// --session-id.
func newID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
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
