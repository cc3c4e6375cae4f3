package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/wire"
)

// Bounds of grep's answer.
const (
	defaultMaxHits = 100
	maxMaxHits     = 10000
)

// errEnough stops a grep once it has the hits it answers with.
var errEnough = errors.New("enough hits")

// sessionTools are run_command, grep, resize and restore, with the
// annotations of the table in list.
func (t *tools) sessionTools(readOnly, runs *sdk.ToolAnnotations) []tool {
	no := false
	// A resize destroys nothing, and twice is once.
	resizes := &sdk.ToolAnnotations{DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no}
	return []tool{
		t.tool("run_command", "Run a command in a session's shell", `Run a command in a shell session at its prompt (typed there: a command of several lines as one eval of it, so the shell shows no continuation prompts), wait for that command to end, and return its exit_code, its own output as text (no echo of the line, no prompt; as the program printed it, tabs and trailing blanks included, with "\r\n" as "\n", a "\r" or backspace drawing over the line as a terminal does, and escape sequences removed, unless raw; the last max_bytes of it, truncated: true when earlier output was left out; read_output from output_start reads all of it) and cwd, the shell's directory afterwards. Without session, the command runs as the user's shell's -c in a new session of its own (in the workspace, as create_session would make it), which ends with the command and stays readable: session in the result names it. With cwd or env the command runs in a subshell (in fish, a function that returns to the directory): what it changes in the shell does not last. The end and the status come from termkeep's shell integration (bash, zsh, fish sessions have it); in another shell the line is wrapped in printfs of markers instead (shell_integration: false). Types only when the session's activity is at_prompt; refused otherwise, with one line saying what the session is doing (a command running, a program reading the terminal, typing not yet read). A command that stops to ask for input waits for it: list_sessions shows its activity as reading_terminal (or waiting_on_events, or waiting where the kernel's word is unknown), and send_input answers. If timeout_ms passes first, returns timed_out: true and the output so far, and does what on_timeout says: leave (the default) lets the command go on; interrupt types Ctrl-C as a user would; kill sends SIGKILL to the command's process group (never the shell). on_timeout_result says what happened: left, interrupted or killed, with exit_code when the command then ended within 3 seconds, or still_running.`,
			`{"type":"object","properties":{
"session":{"type":"string","description":"id or name of a session running a shell; without it the command runs in a new session of its own (the user's shell with -c), which ends with it"},
"command":{"type":"string","description":"shell in the session's shell's syntax: one line or several (a heredoc, a loop), run as one command with one exit status"},
"cwd":{"type":"string","description":"run the command in this directory (absolute, or relative to the shell's directory); the shell's own directory does not change"},
"env":{"type":"object","additionalProperties":{"type":"string"},"description":"variables for this command only, as {\"NAME\": \"value\"}"},
"timeout_ms":{"type":"integer","minimum":1,"maximum":600000,"default":30000,"description":"stop waiting after this long"},
"on_timeout":{"type":"string","enum":["leave","interrupt","kill"],"default":"leave","description":"what becomes of a command still running at timeout_ms: left running, interrupted (Ctrl-C), or its process group killed"},
"max_bytes":{"type":"integer","minimum":1,"maximum":1048576,"default":65536,"description":"at most this many bytes of the output's text, from its end"},
"raw":{"type":"boolean","default":false,"description":"the output's bytes as the terminal got them (escape sequences, \\r\\n), instead of its text"}},
"required":["command"],"additionalProperties":false}`,
			runs, t.runCommand),
		t.tool("grep", "Search a session's whole output", `Find the lines of a session's output log that match pattern (RE2 syntax, or plain text with literal), however long ago they scrolled off the screen: each hit's offset (pass it to read_output to read around it), time and line as the terminal showed it. At most max_hits, the newest (earlier_left_out: true when older ones were left out).`,
			`{"type":"object","properties":{
"session":{"type":"string","description":"session id or name"},
"pattern":{"type":"string","description":"RE2 regular expression (or text with literal) matched against each line"},
"ignore_case":{"type":"boolean","default":false,"description":"letters match in either case"},
"literal":{"type":"boolean","default":false,"description":"pattern is plain text"},
"max_hits":{"type":"integer","minimum":1,"maximum":10000,"default":100,"description":"return at most this many hits, the newest"}},
"required":["session","pattern"],"additionalProperties":false}`,
			readOnly, t.grep),
		t.tool("resize", "Resize a session's terminal", `Set a running session's terminal size in characters and keep it there: full-screen programs redraw for it, and the viewers' windows no longer change it (the session's size policy becomes fixed, as tmux's resize-window makes it manual) until someone runs termkeep resize SESSION --policy latest.`,
			`{"type":"object","properties":{
"session":{"type":"string","description":"session id or name"},
"cols":{"type":"integer","minimum":1,"maximum":1000,"description":"width"},
"rows":{"type":"integer","minimum":1,"maximum":1000,"description":"height"}},
"required":["session","cols","rows"],"additionalProperties":false}`,
			resizes, t.resize),
		t.tool("restore", "Start an ended session again", `Start an ended session (exited, closed, interrupted by a reboot) again in its last directory, at its size, below its old screen, with the same id: an agent session (created with agent) resumes its own conversation. Returns the session as it runs now, and notices of what had to differ.`,
			`{"type":"object","properties":{
"session":{"type":"string","description":"session id or name"}},
"required":["session"],"additionalProperties":false}`,
			runs, t.restore),
	}
}

// ---- grep ---------------------------------------------------------------

type hitView struct {
	Offset uint64     `json:"offset"`
	Time   *time.Time `json:"time,omitempty"`
	Line   string     `json:"line"`
}

func (t *tools) grep(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Session    string `json:"session"`
		Pattern    string `json:"pattern"`
		IgnoreCase bool   `json:"ignore_case"`
		Literal    bool   `json:"literal"`
		MaxHits    *int   `json:"max_hits"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.Pattern == "" {
		return nil, argErr("argument \"pattern\" is required: the text or RE2 regular expression to look for")
	}
	limit := defaultMaxHits
	if a.MaxHits != nil {
		if *a.MaxHits < 1 || *a.MaxHits > maxMaxHits {
			return nil, argErr("max_hits must be 1..%d", maxMaxHits)
		}
		limit = *a.MaxHits
	}
	b, ref, err := t.resolve(ctx, a.Session)
	if err != nil {
		return nil, err
	}
	hits := []hitView{}
	more := false
	// The newest hits matter most (the last error): keep a window of the
	// last limit, and say that earlier ones were left out.
	err = b.Grep(ctx, ref, a.Pattern, client.GrepOptions{IgnoreCase: a.IgnoreCase, Literal: a.Literal}, func(h api.GrepHit) error {
		if len(hits) == limit {
			hits, more = append(hits[:0], hits[1:]...), true
		}
		hits = append(hits, hitView{Offset: h.Offset, Time: h.Time, Line: h.Line})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"hits": hits, "earlier_left_out": more}, nil
}

// ---- resize -------------------------------------------------------------

func (t *tools) resize(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Session string `json:"session"`
		Cols    int    `json:"cols"`
		Rows    int    `json:"rows"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.Cols < 1 || a.Rows < 1 || a.Cols > wire.MaxDim || a.Rows > wire.MaxDim {
		return nil, argErr("cols and rows must both be 1..%d", wire.MaxDim)
	}
	b, s, err := t.lookup(ctx, a.Session)
	if err != nil {
		return nil, err
	}
	if s.State != "running" {
		return nil, fmt.Errorf("session %s is %s%s; only a running session has a size to change", a.Session, s.State, exitNote(s))
	}
	s, err = b.Resize(ctx, s.ID, a.Cols, a.Rows)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"session": s.ID, "cols": s.Cols, "rows": s.Rows}
	if s.Cols != a.Cols || s.Rows != a.Rows {
		out["note"] = "the session did not confirm that size in time; read list_sessions for the size it has"
	}
	return out, nil
}

// ---- restore ------------------------------------------------------------

func (t *tools) restore(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Session string `json:"session"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	b, s, err := t.lookup(ctx, a.Session)
	if err != nil {
		return nil, err
	}
	if s.State == "running" {
		return nil, fmt.Errorf("session %s is running; restore starts only an ended one", a.Session)
	}
	// What a restore runs is held to the command rules as a new session is.
	if s.RestoreCommand != "" {
		err = t.opts.Scope.CommandLine(s.RestoreCommand)
	} else {
		err = t.opts.Scope.Command(s.Command, t.opts.Env)
	}
	if err != nil {
		return nil, err
	}
	r, err := b.Restore(ctx, s.ID, t.opts.Env)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"id": r.Session.ID, "name": r.Session.Name, "state": r.Session.State, "cwd": r.Session.Cwd,
		"command": r.Session.Command}
	if r.Session.RestoreCommand != "" {
		out["restore_command"] = r.Session.RestoreCommand
	}
	if len(r.Notices) > 0 {
		out["notices"] = r.Notices
	}
	return out, nil
}
