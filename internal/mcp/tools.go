package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"termkeep/internal/agents"
	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/keys"
	"termkeep/internal/wire"
)

// Bounds of the tools' arguments.
const (
	defaultMaxBytes = 64 << 10
	maxMaxBytes     = 1 << 20
	defaultTimeout  = 30 * time.Second
	maxTimeout      = 10 * time.Minute
	maxScrollback   = 100000
	maxTailLines    = 100000
)

// tools are the server's tools; each reaches termkeep through
// opts.Connect.
type tools struct {
	opts    Options
	running busy // sessions a run_command runs in
}

type tool struct {
	def     *sdk.Tool
	handler sdk.ToolHandler
}

// list is the tool table: name, what a model reads about it, its input
// schema, and its handler.
func (t *tools) list() []tool {
	// Hints as the MCP specification defines them. Reading changes
	// nothing. Starting a program or typing into one runs whatever it is
	// told, which may delete files or reach any host: destructive and open
	// world. Ending a session ends what ran in it.
	yes, no := true, false
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}
	runs := &sdk.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}
	return append([]tool{
		t.tool("list_sessions", "List termkeep's sessions", `List every termkeep session: its id, name, state (running, exited, closed, interrupted, paused), exit_code once ended, workspace, working directory, command, end_offset (bytes printed so far), quiet_since (when a running session last printed, once it has printed nothing for 2 seconds; null while output flows) and, for a running session, activity: what it is doing. activity.state is at_prompt (its shell waits for a command and nothing typed is unread: run_command or send_input), reading_terminal (the kernel says a program, activity.program and activity.pid, is blocked reading the terminal: what you type next is its answer; activity.last_line is likely its question), waiting_on_events (the kernel says the foreground waits in poll or select with the terminal open: an editor, a pager, a REPL), running (a command is at work: activity.command and activity.since say which and since when; a quiet one may just be slow, as sleep is) or starting (a shell has not drawn its first prompt yet). activity.kernel is true when the kernel's word decided the state; without it (not Linux, an older session) waiting replaces reading_terminal and waiting_on_events: a quiet program whose screen looks like a prompt or a question, most likely waiting for input. activity.hint is what the screen suggests ("looks like a prompt"), never the state.`,
			`{"type":"object","properties":{"workspace":{"type":"string","description":"only the sessions of this workspace"}},"additionalProperties":false}`,
			readOnly, t.listSessions),
		t.tool("create_session", "Start a terminal session", `Start a program in a new terminal session (a pty) that keeps running on its own, and return its id. Without command or agent it runs the user's shell: run commands in it with run_command. Read a session with read_screen or read_output, type with send_input, wait with wait_for; list_sessions says when a new shell is at its prompt.`,
			`{"type":"object","properties":{
"command":{"description":"what to run: a shell command line (string), or a program and its arguments (array). Default: the user's shell","anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"},"minItems":1}]},
"agent":{"type":"string","enum":`+jsonList(agents.Names())+`,"description":"start this AI coding agent's CLI instead of a command; a restore of the session resumes its last conversation"},
"cwd":{"type":"string","description":"working directory (absolute, or relative to the MCP server's); default: the workspace's directory, else the MCP server's"},
"name":{"type":"string","description":"a unique name to use instead of the id (letters, digits, . _ @ + -)"},
"workspace":{"type":"string","description":"group the session in this workspace (created with cwd as its directory if it does not exist)"},
"cols":{"type":"integer","minimum":1,"maximum":1000,"description":"terminal width (default 80)"},
"rows":{"type":"integer","minimum":1,"maximum":1000,"description":"terminal height (default 24)"}},"additionalProperties":false}`,
			runs, t.createSession),
		t.tool("send_input", "Type into a session", `Type into a session as at its keyboard: text, then the named keys, then Enter if enter is true (for a command line in a shell, run_command also waits for its end and returns its output and status). Returns offset, the session's output end before this input: wait_for or read_output with that offset sees only what the input caused.`,
			`{"type":"object","properties":{
"session":{"type":"string","description":"session id or name"},
"text":{"type":"string","description":"text to type, as is (a newline in it is a newline, not Enter: use enter)"},
"enter":{"type":"boolean","default":false,"description":"press Enter at the end"},
"keys":{"type":"array","items":{"type":"string"},"description":"keys to press after text, by name, each sent as the program expects it in its current mode (ESC O A for Up in less or vim): Enter, Tab, S-Tab, Escape, Backspace, Space, Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1 … F12, Ctrl-A … Ctrl-Z (Ctrl-C interrupts, Ctrl-D ends input), Ctrl-\\, Ctrl-Space; prefixes C-, M- (Alt) and S- (Shift) combine: C-Up, M-F5"}},
"required":["session"],"additionalProperties":false}`,
			runs, t.sendInput),
		t.tool("read_screen", "Read a session's screen", `Return a session's screen as text, as a person looking at the terminal sees it now (full-screen programs included), trailing blank lines left out; scrollback adds up to that many lines of history above it (when there is less history than that, a second text says how much there was; read_output has everything still logged).`,
			`{"type":"object","properties":{
"session":{"type":"string","description":"session id or name"},
"scrollback":{"type":"integer","minimum":0,"maximum":100000,"default":0,"description":"lines of history to add above the screen"}},
"required":["session"],"additionalProperties":false}`,
			readOnly, t.readScreen),
		t.tool("read_output", "Read a session's output", `Return what a session printed from a byte offset on, as text (escape sequences removed unless raw; invalid UTF-8 as U+FFFD), at most max_bytes of it, with next_offset: pass it back as offset to read on, and you never see a byte twice or miss one. gap says when bytes were skipped (no longer kept). more is true when there is output beyond next_offset already. A "\r" goes back to the start of its line as on a terminal, so a progress bar redrawn many times reads as its last state. tail_lines or tail_bytes read the end instead (truncated: true when there is earlier output); pass next_offset back later to read what comes after.`,
			`{"type":"object","properties":{
"session":{"type":"string","description":"session id or name"},
"offset":{"type":"integer","minimum":0,"description":"first byte to read (default: the oldest output still kept)"},
"max_bytes":{"type":"integer","minimum":1,"maximum":1048576,"default":65536,"description":"at most this many bytes of output"},
"raw":{"type":"boolean","default":false,"description":"keep escape sequences and control characters"},
"tail_lines":{"type":"integer","minimum":1,"maximum":100000,"description":"read only the last this many lines (within the last max_bytes of output), instead of from offset"},
"tail_bytes":{"type":"integer","minimum":1,"maximum":1048576,"description":"read only the last this many bytes of output, instead of from offset"}},
"required":["session"],"additionalProperties":false}`,
			readOnly, t.readOutput),
		t.tool("wait_for", "Wait for something in a session", `Block until one thing happens in a session, or timeout_ms passes: text (literal) or regex (RE2 syntax; (?m) for ^ $ per line) appears on the screen (its lines without trailing blanks and the blank lines below the last text left out, so \z is the end of the last line and text ending in spaces, such as a prompt "$ ", matches at a line's end), or with offset in the output printed from that offset on (escape sequences removed); exit: the process ends; quiet_ms: nothing is printed for that long. Returns what happened: matched (with the text, and its line or its offsets), exited (with exit_code), quiet, or timed_out: true, which is a normal answer, not an error. If the session ends first, says exited. A restart of the termkeep server during the wait does not end it.`,
			`{"type":"object","properties":{
"session":{"type":"string","description":"session id or name"},
"text":{"type":"string","description":"wait until this text appears"},
"regex":{"type":"string","description":"wait until this regular expression matches"},
"offset":{"type":"integer","minimum":0,"description":"match text or regex in the output from this byte offset on (e.g. the offset send_input returned) instead of on the screen"},
"exit":{"type":"boolean","description":"wait until the session's process exits"},
"quiet_ms":{"type":"integer","minimum":1,"maximum":600000,"description":"wait until the session prints nothing for this many milliseconds"},
"timeout_ms":{"type":"integer","minimum":0,"maximum":600000,"default":30000,"description":"give up after this many milliseconds"}},
"required":["session"],"additionalProperties":false}`,
			readOnly, t.waitFor),
		t.tool("kill_session", "End a session", `End a session: its processes get SIGHUP, then SIGKILL after a grace period. Returns once it has ended. Its output stays readable until it is removed with the termkeep CLI.`,
			`{"type":"object","properties":{"session":{"type":"string","description":"session id or name"}},"required":["session"],"additionalProperties":false}`,
			&sdk.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &yes}, t.killSession),
	}, t.sessionTools(readOnly, runs)...)
}

func jsonList(items []string) string {
	b, _ := json.Marshal(items)
	return string(b)
}

// tool builds a table entry. run decodes its own arguments and returns the
// result's structured content, or the text of a result that is only text.
func (t *tools) tool(name, title, desc, schema string, ann *sdk.ToolAnnotations, run func(ctx context.Context, args json.RawMessage) (any, error)) tool {
	ann = new(*ann) // the table shares them
	ann.Title = title
	def := &sdk.Tool{Name: name, Title: title, Description: desc, InputSchema: json.RawMessage(schema), Annotations: ann}
	h := func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := req.Params.Arguments
		if a := strings.TrimSpace(string(args)); a != "" && a != "null" && a[0] != '{' {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: the arguments of tools/call must be a JSON object"}
		}
		out, err := run(withProgress(ctx, req), args)
		if err != nil {
			return errorResult(err), nil
		}
		return result(out)
	}
	return tool{def: def, handler: h}
}

// textOnly is a result that is text for the model, with no structure.
type textOnly string

func result(v any) (*sdk.CallToolResult, error) {
	if r, ok := v.(*sdk.CallToolResult); ok {
		return r, nil
	}
	if s, ok := v.(textOnly); ok {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(s)}}}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode the result: %w", err)
	}
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
	}, nil
}

// errorResult is a failed call as the model reads it.
func errorResult(err error) *sdk.CallToolResult {
	msg := err.Error()
	var re *wire.RemoteError
	switch {
	case errors.As(err, &re):
		msg = re.Message
	case errors.Is(err, client.ErrNoServer):
		msg = "no termkeep server is running (start one with `termkeep serve`)"
	case errors.Is(err, context.DeadlineExceeded):
		msg = "the termkeep server did not answer in time"
	case errors.Is(err, context.Canceled):
		// The client cancelled the call; the SDK answers it all the same.
		msg = "the call was cancelled; what runs in the session goes on"
	}
	// The server's sentences name the CLI; a model has the tool.
	msg = strings.ReplaceAll(msg, "see `termkeep ls`", "see list_sessions")
	if !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, ")") {
		msg += "."
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}

// backend connects for one call.
func (t *tools) backend(ctx context.Context) (Backend, error) {
	return t.opts.Connect(ctx)
}

// inScope resolves ref to what the tool acts on: under a workspace scope
// the session's id, once the scope has seen that the session is in the
// workspace (a session beyond it is answered as none); unscoped, ref as
// given. Every tool that names a session calls it before anything else.
func (t *tools) inScope(ctx context.Context, b Backend, ref string) (string, error) {
	if t.opts.Scope.Workspace == "" {
		return ref, nil
	}
	var found *api.Session
	// Names are looked up in the workspace: another workspace's session
	// of the same name is none of its business.
	s, err := b.GetIn(ctx, t.opts.Scope.Workspace, ref)
	switch {
	case err == nil:
		found = &s
	case !client.IsNotFound(err):
		return "", err
	}
	if err := t.opts.Scope.Session(ref, found); err != nil {
		return "", err
	}
	return s.ID, nil
}

// resolve is what a tool that names a session does first: ref must be
// given, a server must answer, and the session must be in the scope. It
// returns the backend and the reference to act on (inScope).
func (t *tools) resolve(ctx context.Context, ref string) (Backend, string, error) {
	if err := needSession(ref); err != nil {
		return nil, "", err
	}
	b, err := t.backend(ctx)
	if err != nil {
		return nil, "", err
	}
	id, err := t.inScope(ctx, b, ref)
	return b, id, err
}

// lookup is resolve, then the session as the server has it now.
func (t *tools) lookup(ctx context.Context, ref string) (Backend, api.Session, error) {
	b, id, err := t.resolve(ctx, ref)
	if err != nil {
		return nil, api.Session{}, err
	}
	s, err := b.Get(ctx, id)
	return b, s, err
}

func needSession(ref string) error {
	if strings.TrimSpace(ref) == "" {
		return argErr("argument \"session\" is required: a session's id or name (see list_sessions)")
	}
	return nil
}

// ---- list_sessions ----------------------------------------------------

// sessionView is a session as the tools show it.
type sessionView struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	State      string     `json:"state"`
	ExitCode   *int       `json:"exit_code,omitempty"`
	Workspace  string     `json:"workspace"`
	Cwd        string     `json:"cwd"`
	Command    []string   `json:"command"`
	EndOffset  uint64     `json:"end_offset"`
	QuietSince *time.Time `json:"quiet_since"`
	// Activity says what a running session is doing (package readiness).
	Activity *api.Activity `json:"activity,omitempty"`
}

func view(s api.Session) sessionView {
	return sessionView{ID: s.ID, Name: s.Name, State: s.State, ExitCode: s.ExitCode, Workspace: s.Workspace,
		Cwd: s.Cwd, Command: s.Command, EndOffset: s.End, QuietSince: s.QuietSince, Activity: s.Activity}
}

func (t *tools) listSessions(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Workspace string `json:"workspace"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	ws, err := t.opts.Scope.ListWorkspace(a.Workspace)
	if err != nil {
		return nil, err
	}
	b, err := t.backend(ctx)
	if err != nil {
		return nil, err
	}
	list, err := b.List(ctx)
	if err != nil {
		return nil, err
	}
	out := []sessionView{}
	for _, s := range list {
		if ws == "" || s.Workspace == ws {
			out = append(out, view(s))
		}
	}
	return map[string]any{"sessions": out}, nil
}

// ---- create_session ---------------------------------------------------

func (t *tools) createSession(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Command   commandArg `json:"command"`
		Agent     string     `json:"agent"`
		Cwd       string     `json:"cwd"`
		Name      string     `json:"name"`
		Workspace string     `json:"workspace"`
		Cols      int        `json:"cols"`
		Rows      int        `json:"rows"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if (a.Cols == 0) != (a.Rows == 0) {
		return nil, argErr("give both cols and rows, or neither (default 80x24)")
	}
	if a.Cols < 0 || a.Rows < 0 || a.Cols > wire.MaxDim || a.Rows > wire.MaxDim {
		return nil, argErr("cols and rows must be 1..%d", wire.MaxDim)
	}
	ws, err := t.opts.Scope.CreateWorkspace(a.Workspace)
	if err != nil {
		return nil, err
	}
	a.Workspace = ws
	req := api.CreateRequest{Name: a.Name, Command: a.Command, Workspace: a.Workspace, Cols: a.Cols, Rows: a.Rows, Env: t.opts.Env}
	if a.Agent != "" {
		if len(a.Command) > 0 {
			return nil, argErr("give command or agent, not both")
		}
		p, err := agents.Lookup(a.Agent)
		if err != nil {
			return nil, argErr("%v", err)
		}
		// Before anything is created: a missing agent is the whole answer.
		l, err := p.Plan(nil, t.opts.LookPath)
		if err != nil {
			return nil, err
		}
		req.Command, req.RestoreCommand = l.Command, l.Restore
		req.Agent, req.AgentConversation = p.Name, l.Conversation
	}
	if err := t.opts.Scope.Command(req.Command, req.Env); err != nil {
		return nil, err
	}
	b, err := t.backend(ctx)
	if err != nil {
		return nil, err
	}
	if req.Cwd, err = t.newCwd(ctx, b, a.Workspace, a.Cwd); err != nil {
		return nil, err
	}
	s, err := b.Create(ctx, req)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"id": s.ID, "name": s.Name, "state": s.State, "cwd": s.Cwd, "command": s.Command}
	if s.RestoreCommand != "" {
		out["restore_command"] = s.RestoreCommand
	}
	return out, nil
}

// newCwd is the directory of a new session of workspace ws given cwd:
// cwd when absolute, else relative to the MCP server's directory; with
// none, the workspace's directory, else the MCP server's.
func (t *tools) newCwd(ctx context.Context, b Backend, ws, cwd string) (string, error) {
	base := t.opts.Dir
	if base == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("find the current directory: %w", err)
		}
		base = wd
	}
	switch {
	case cwd != "" && filepath.IsAbs(cwd):
		return cwd, nil
	case cwd != "":
		return filepath.Join(base, cwd), nil
	}
	if ws != "" {
		list, err := b.Workspaces(ctx)
		if err != nil {
			return "", err
		}
		for _, w := range list {
			if w.Name == ws && w.Dir != "" {
				return w.Dir, nil
			}
		}
	}
	return base, nil
}

// ---- send_input -------------------------------------------------------

// keyPause separates the typed text from the keys after it: a program that
// tells typing from pasting by its speed (many agents' input boxes) then
// reads an Enter after text as a key press, not as part of a paste.
const keyPause = 30 * time.Millisecond

func (t *tools) sendInput(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Session string   `json:"session"`
		Text    string   `json:"text"`
		Enter   bool     `json:"enter"`
		Keys    []string `json:"keys"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := needSession(a.Session); err != nil {
		return nil, err
	}
	// Every key is known before anything is typed; the server encodes
	// each for the modes the program has set when it is pressed.
	for _, k := range a.Keys {
		if _, err := keys.Bytes(k); err != nil {
			return nil, argErr("keys: %v", err)
		}
	}
	presses := slices.Clone(a.Keys)
	if a.Enter {
		presses = append(presses, "Enter")
	}
	if a.Text == "" && len(presses) == 0 {
		return nil, argErr("nothing to send: give text, keys or enter")
	}
	b, s, err := t.lookup(ctx, a.Session)
	if err != nil {
		return nil, err
	}
	if s.State != "running" {
		return nil, fmt.Errorf("session %s is %s%s; it takes no input", a.Session, s.State, exitNote(s))
	}
	if err := t.opts.Scope.Input(s); err != nil {
		return nil, err
	}
	n := 0
	if a.Text != "" {
		if err := b.Input(ctx, s.ID, []byte(a.Text)); err != nil {
			return nil, err
		}
		n += len(a.Text)
	}
	for i, k := range presses {
		if i > 0 || a.Text != "" {
			select {
			case <-time.After(keyPause):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		sent, err := b.Send(ctx, s.ID, api.SendRequest{Keys: []string{k}})
		if err != nil {
			return nil, err
		}
		n += sent.Bytes
	}
	return map[string]any{"session": s.ID, "offset": s.End, "bytes": n}, nil
}

func exitNote(s api.Session) string {
	if s.ExitCode != nil {
		return fmt.Sprintf(" (status %d)", *s.ExitCode)
	}
	if s.Reason != "" {
		return " (" + s.Reason + ")"
	}
	return ""
}

// ---- kill_session -----------------------------------------------------

func (t *tools) killSession(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Session string `json:"session"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	b, ref, err := t.resolve(ctx, a.Session)
	if err != nil {
		return nil, err
	}
	s, err := b.Kill(ctx, ref)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": s.ID, "state": s.State, "exit_code": s.ExitCode}, nil
}
