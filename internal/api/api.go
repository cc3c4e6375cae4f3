// Package api holds the JSON shapes of the server's HTTP API, shared by the
// server and its clients. docs/protocol.md describes the endpoints.
package api

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Session is a session as the API shows it; `termkeep ls --json` prints a
// list of these.
type Session struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	State     string     `json:"state"`
	Pid       *int       `json:"pid"`       // the child's, nil when not running
	ExitCode  *int       `json:"exit_code"` // nil until known
	Reason    string     `json:"reason,omitempty"`
	Command   []string   `json:"command"`
	Cwd       string     `json:"cwd"`
	Workspace string     `json:"workspace"`
	Cols      int        `json:"cols"`
	Rows      int        `json:"rows"`
	Owner     string     `json:"owner,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	EndedAt   *time.Time `json:"ended_at"`
	// First and End are the oldest retained offset and the offset after the
	// last byte, as the server knows them.
	First uint64 `json:"first_offset"`
	End   uint64 `json:"end_offset"`
	// Viewers is how many viewers are attached now; Resyncs how many times
	// a viewer that fell behind was skipped to the present.
	Viewers int    `json:"viewers"`
	Resyncs uint64 `json:"resyncs"`
	// SizePolicy is the session's own size policy ("" = the server's).
	SizePolicy string `json:"size_policy,omitempty"`
	// RestoreCommand is what a restore runs instead of Command ("" = the
	// same command); AutoRestore whether the server restores the session by
	// itself when it finds it interrupted.
	RestoreCommand   string `json:"restore_command,omitempty"`
	AutoRestore      bool   `json:"auto_restore,omitempty"`
	ShellIntegration bool   `json:"shell_integration"`
	// Unknown names what could not be recovered of a session adopted
	// from a directory whose meta.json was damaged or missing: "command"
	// (Command is then empty, and a restore starts a shell), "cwd".
	Unknown []string `json:"unknown,omitempty"`
	// Cause is why an interrupted session ended, when the server knows:
	// "machine_restarted" (it ran in an earlier boot of the machine),
	// "holder_killed" (its holder died in this boot), "stopped" (its
	// holder was stopped from outside termkeep) or "shutdown" (logind
	// announced the machine's shutdown); CauseText says it in words.
	Cause     string `json:"cause,omitempty"`
	CauseText string `json:"cause_text,omitempty"`
	// Agent is the AI agent the session was created for (`new --agent`);
	// AgentConversation the id of the agent's conversation it is pinned
	// to, which a restore resumes.
	Agent             string `json:"agent,omitempty"`
	AgentConversation string `json:"agent_conversation,omitempty"`
	// Restorable says that the restore policy brings the session back:
	// `termkeep restore --all` does, and the server by itself when it
	// asks for that (AutoRestore, or its workspace's). Only an interrupted
	// session whose process is not known to have exited is.
	Restorable bool `json:"restorable,omitempty"`
	// LogStopped is set while the session's output cannot be logged.
	LogStopped *LogStop `json:"log_stopped,omitempty"`
	// Lingering is set while a running session's child has exited and
	// its holder still reads the output of processes the child left
	// behind (they hold its terminal): `ls` shows "exited(N), output
	// lingering". The state stays running until the holder is done.
	Lingering *Lingering `json:"lingering,omitempty"`
	// Unresponsive is set while the session runs and its holder does not
	// answer the server (stopped, wedged): input to it fails after the
	// holder timeout, and a kill SIGKILLs the holder. UnresponsiveSince is
	// when it was judged so.
	Unresponsive      bool       `json:"unresponsive,omitempty"`
	UnresponsiveSince *time.Time `json:"unresponsive_since,omitempty"`
	// Forced is set in the answer to a kill that went past asking the
	// holder: what it did, in words ("its holder (pid 123) did not
	// answer; termkeep sent SIGKILL to ...").
	Forced string `json:"forced,omitempty"`
	// QuietSince is when a running session last printed, once it has
	// printed nothing for the server's quiet threshold (2 s by default):
	// it is likely waiting for input. Nil while output flows.
	QuietSince *time.Time `json:"quiet_since"`
	// Activity is what a running session is doing, in the words an agent
	// acts on (package readiness); nil when it is not running here.
	Activity *Activity `json:"activity,omitempty"`
	// Shell is what the session's shell is doing, as its shell
	// integration's OSC 133 marks tell; nil when the server has no view of
	// it (the session is not running under this server).
	Shell *Shell `json:"shell,omitempty"`
	// HolderProtocol is the protocol version the running session's holder
	// speaks (wire.Version of its build); 0 when not known. A server
	// upgraded while sessions ran speaks their older version too: `ls`
	// shows it when it is not the server's (api.Health's Protocol).
	HolderProtocol int `json:"holder_protocol,omitempty"`
	// InputMode is a running session's pty input mode (inputmode.go):
	// what the page's predictive echo needs to know; nil when the session
	// is not running here.
	InputMode *InputMode `json:"input_mode,omitempty"`
}

// Activity is a running session's readiness (package readiness says
// what each state promises): State is "at_prompt" (its shell has drawn
// its prompt and, when Kernel, leads the terminal with nothing typed
// unread), "reading_terminal" (the kernel says a foreground program is
// blocked reading the terminal: Program and Pid name it, LastLine is
// likely its question), "waiting_on_events" (the kernel says the
// foreground is blocked in poll, select or epoll holding the terminal:
// an editor, a pager, a REPL), "running" (a command, or the session's
// program, is at work: Command and Since say which and since when),
// "starting" (a shell with integration has not drawn its first prompt
// yet) or, only where the kernel's word is not known (Kernel false: not
// Linux, an older holder), "waiting" (a full-screen or interactive
// program is quiet, most likely waiting for input). Hint is what the
// screen suggests beside a kernel-vouched state ("looks like a prompt",
// "a full-screen program"), never the state.
type Activity struct {
	State    string     `json:"state"`
	Since    *time.Time `json:"since,omitempty"`
	Command  string     `json:"command,omitempty"`
	LastLine string     `json:"last_line,omitempty"`
	Kernel   bool       `json:"kernel,omitempty"`
	Pid      int        `json:"pid,omitempty"`
	Program  string     `json:"program,omitempty"`
	Unread   int        `json:"unread,omitempty"`
	Hint     string     `json:"hint,omitempty"`
}

// Shell is a session's shell as its marks tell it.
type Shell struct {
	// State is "prompt" (at its prompt), "running" (a command started and
	// has not ended) or "unknown" (no marks: no shell integration, or
	// none seen yet).
	State string `json:"state"`
	// Since is when the shell entered State.
	Since *time.Time `json:"since,omitempty"`
	// Command is the running command's line, when the shell marked it.
	Command string `json:"command,omitempty"`
	// Last is the last command that ended.
	Last *ShellCommand `json:"last,omitempty"`
}

// ShellCommand is a command that ended. Its output is the log's bytes in
// [OutputStart, OutputEnd), when HasOutput (its start was seen).
type ShellCommand struct {
	Command     string    `json:"command,omitempty"`
	Status      *int      `json:"status"`
	EndedAt     time.Time `json:"ended_at"`
	HasOutput   bool      `json:"has_output"`
	OutputStart uint64    `json:"output_start"`
	OutputEnd   uint64    `json:"output_end"`
}

// Lingering is how a child that left processes behind exited, and until
// when its holder reads their output at most.
type Lingering struct {
	ExitCode int       `json:"exit_code"`
	Signal   int       `json:"signal,omitempty"`
	Until    time.Time `json:"until"`
}

// CreateRequest asks for a new session.
type CreateRequest struct {
	Name      string   `json:"name,omitempty"`
	Command   []string `json:"command,omitempty"` // default: $SHELL from Env, else /bin/sh
	Cwd       string   `json:"cwd"`               // absolute
	Workspace string   `json:"workspace,omitempty"`
	Cols      int      `json:"cols,omitempty"` // default 80
	Rows      int      `json:"rows,omitempty"` // default 24
	// Env is the caller's environment (KEY=VALUE); SetEnv overrides it.
	Env    []string `json:"env,omitempty"`
	SetEnv []string `json:"set_env,omitempty"`
	// KeepEnv names more variables to record in the session's meta.json
	// (beyond TERM, LANG, LC_*, SHELL, PATH and the SetEnv ones); a name that
	// looks secret is never recorded.
	KeepEnv []string `json:"keep_env,omitempty"`
	// SizePolicy overrides the server's size policy for this session:
	// "latest", "smallest", "largest" or "fixed".
	SizePolicy string `json:"size_policy,omitempty"`
	// RestoreCommand is a shell command line (run with /bin/sh -c) that a
	// restore runs instead of Command, e.g. "claude --continue".
	RestoreCommand string `json:"restore_command,omitempty"`
	// Agent names the AI agent preset (internal/agents) that Command
	// starts, and AgentConversation the conversation id Command pins it
	// to: a restore resumes that conversation when the agent recorded it,
	// and otherwise runs Command again, saying so.
	Agent             string `json:"agent,omitempty"`
	AgentConversation string `json:"agent_conversation,omitempty"`
	// AutoRestore has the server restore the session by itself when it
	// finds it interrupted (after a reboot).
	AutoRestore bool `json:"auto_restore,omitempty"`
	// NoShellIntegration turns off termkeep's integration for bash, zsh and
	// fish (working directory, prompt marks, the session's history file).
	NoShellIntegration bool `json:"no_shell_integration,omitempty"`
	// Linger is how long the holder reads on after the child exited while
	// processes it left behind hold the terminal, as a Go duration
	// ("90s", "0" for not at all); "" is 60 s.
	Linger string `json:"linger,omitempty"`
}

// RestoreRequest asks for a new process in an ended or paused session.
type RestoreRequest struct {
	// Env is the caller's environment (KEY=VALUE), under the variables the
	// session saved; empty means the server's own.
	Env []string `json:"env,omitempty"`
}

// Restored answers a restore: the session as it now runs, and what the
// restore had to do differently (a directory that is gone, say).
type Restored struct {
	Session Session  `json:"session"`
	Notices []string `json:"notices,omitempty"`
}

// SendRequest types into a session by name: Text, then each of Keys, then
// Enter. Keys are encoded for the modes the session's program has set
// (cursor keys in application mode, say), and Text goes as a bracketed
// paste when the program asked for those, unless NoPaste.
type SendRequest struct {
	Text    string   `json:"text,omitempty"`
	Keys    []string `json:"keys,omitempty"`
	Enter   bool     `json:"enter,omitempty"`
	NoPaste bool     `json:"no_paste,omitempty"`
	// Signal ("INT", "TERM", "KILL", "HUP", "QUIT", with or without
	// "SIG") goes to the program in the terminal's foreground, the
	// command a shell runs, never the shell itself; alone, or after the
	// text and keys.
	Signal string `json:"signal,omitempty"`
}

// Sent answers a SendRequest: how many bytes went to the session, and the
// modes they were encoded for.
type Sent struct {
	Bytes     int  `json:"bytes"`
	Pasted    bool `json:"pasted"`     // Text went between bracketed-paste marks
	AppCursor bool `json:"app_cursor"` // cursor keys went as ESC O x
}

// Error is the body of every non-2xx answer.
type Error struct {
	Error string `json:"error"`
	// Code, on a 401, says why a credential that once worked stopped:
	// CodeRevoked or CodeExpired. A secret that never worked gets none.
	Code string `json:"code,omitempty"`
}

// Codes of a 401 for a credential that once worked: a client stops
// retrying and says its access ended.
const (
	CodeRevoked = "revoked"
	CodeExpired = "expired"
)

// Health answers GET /v1/health.
type Health struct {
	Version  string `json:"version"`
	Protocol int    `json:"protocol"`
	Pid      int    `json:"pid"`
	StateDir string `json:"state_dir,omitempty"` // to the owner only
}

// ShutdownRequest asks the server to stop.
type ShutdownRequest struct {
	Sessions bool `json:"sessions"` // end every session too
}

// Header names on output streams.
const (
	HeaderFirst = "Termkeep-First-Offset"
	HeaderEnd   = "Termkeep-End-Offset"
	// HeaderGaps is a trailer of the output stream: the ranges of bytes
	// that were never logged (FormatGap), comma separated.
	HeaderGaps = "Termkeep-Gaps"
)

// GapDamaged is the reason of a gap in HeaderGaps whose bytes were logged
// and then lost to damage in the log's files, rather than never logged.
const GapDamaged = "damaged"

// UpgradeProto is the Upgrade token for a wire-protocol stream over the
// unix-socket API.
const UpgradeProto = "termkeep-wire"

// Workspace is a named group of sessions with a directory, as
// `termkeep workspace ls --json` prints it.
type Workspace struct {
	Name        string    `json:"name"`
	Dir         string    `json:"dir"`
	Paused      bool      `json:"paused"`
	AutoRestore bool      `json:"auto_restore"`
	Sessions    int       `json:"sessions"` // how many belong to it
	Running     int       `json:"running"`  // how many of those run now
	CreatedAt   time.Time `json:"created_at"`
}

// WorkspaceRequest creates a workspace (POST /v1/workspaces).
type WorkspaceRequest struct {
	Name        string `json:"name"`
	Dir         string `json:"dir"` // absolute, an existing directory
	AutoRestore bool   `json:"auto_restore,omitempty"`
}

// WorkspaceChange answers a pause or a resume: the workspace and its
// sessions after it, and what could not be done for some of them.
type WorkspaceChange struct {
	Workspace Workspace `json:"workspace"`
	Sessions  []Session `json:"sessions"`
	Errors    []string  `json:"errors,omitempty"`
}

// Gap is a range of a session's output that was never logged.
type Gap struct {
	Start, End uint64
	Reason     string
}

// FormatGap writes a gap as it appears in HeaderGaps: "START-END REASON".
func FormatGap(start, end uint64, reason string) string {
	return strings.TrimSpace(fmt.Sprintf("%d-%d %s", start, end, strings.ReplaceAll(reason, ",", ";")))
}

// ParseGaps reads a HeaderGaps value; it skips what it cannot read.
func ParseGaps(h string) []Gap {
	var out []Gap
	for _, part := range strings.Split(h, ",") {
		rng, reason, _ := strings.Cut(strings.TrimSpace(part), " ")
		a, b, ok := strings.Cut(rng, "-")
		start, err1 := strconv.ParseUint(a, 10, 64)
		end, err2 := strconv.ParseUint(b, 10, 64)
		if ok && err1 == nil && err2 == nil && start <= end {
			out = append(out, Gap{Start: start, End: end, Reason: reason})
		}
	}
	return out
}

// LogStop says that a running session's output is not being logged, since
// which offset and why (for instance "disk full"); its output still reaches
// viewers.
type LogStop struct {
	At     uint64 `json:"at"`
	Reason string `json:"reason"`
}

// SizeRequest is the body of POST …/sessions/{ref}/size (termkeep resize):
// Cols and Rows (both or neither) give the session that size and keep it
// (the policy becomes fixed); SizePolicy alone switches the policy.
type SizeRequest struct {
	Cols       uint16 `json:"cols,omitempty"`
	Rows       uint16 `json:"rows,omitempty"`
	SizePolicy string `json:"size_policy,omitempty"`
}
