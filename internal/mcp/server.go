// Package mcp is termkeep's Model Context Protocol server: the tools an AI
// agent uses to run programs in termkeep sessions and read them, served
// over stdio (`termkeep mcp`).
//
// The protocol itself (initialize, ping, tools/list, tools/call, JSON-RPC
// errors) is the official Go SDK's (github.com/modelcontextprotocol/go-sdk),
// narrowed to protocol revisions up to ProtocolVersion. Two things are this
// package's own: the stdio transport (transport.go), which answers a line
// that is not a message and keeps serving, and the tools (tools.go), which
// reach the termkeep server only through a Backend. Every failure of a tool
// (an unknown session, a bad argument, no server) is a tool result with
// isError set and a sentence saying what to do; JSON-RPC errors are kept for
// what is wrong with the message itself. Nothing but protocol messages is
// written to the output; logs go to the logger.
package mcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProtocolVersion is the MCP revision this server answers with when the
// client asks for one it does not know. A client asking for an older one
// it supports (2025-03-26, 2024-11-05) gets that one back.
const ProtocolVersion = "2025-06-18"

// protocolVersions are the revisions negotiated, newest first.
var protocolVersions = []string{ProtocolVersion, "2025-03-26", "2024-11-05"}

// Options configure a server.
type Options struct {
	// Version is termkeep's version, reported as serverInfo.version.
	Version string
	// Connect returns the backend a tool call uses: it may start a termkeep
	// server, as the CLI's commands do. It is called for each call, so a
	// server that went away is found (or started) again; its error is the
	// call's error, as the tool's result.
	Connect func(ctx context.Context) (Backend, error)
	// Log receives the server's own logs (never the output); nil discards.
	Log *slog.Logger
	// Env is this process's environment (nil: os.Environ()): new sessions
	// get the part of it Scope.ChildEnv keeps. Dir is the directory
	// relative cwd arguments start from and sessions run in by default
	// ("": the current directory).
	Env []string
	Dir string
	// LookPath finds an agent's binary (nil: exec.LookPath).
	LookPath func(string) (string, error)
	// Scope is what the tools may do; see Scope.
	Scope Scope
}

// Serve speaks MCP on r and w (a client's stdin and stdout) until r ends
// or ctx is done, both normal ends (nil): a client stops its server by
// closing its input, or with a signal.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) error {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the watches of subscribed screens
	srv := newServer(ctx, opts, log)
	err := srv.Run(ctx, &lineTransport{r: r, w: w, log: log})
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

// newServer makes the server; ctx bounds the work it does on its own
// (watching the screens a client subscribed to).
func newServer(ctx context.Context, opts Options, log *slog.Logger) *sdk.Server {
	opts.Log = log
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	opts.Env = opts.Scope.ChildEnv(opts.Env)
	t := &tools{opts: opts}
	res := &resources{t: t, ctx: ctx}
	srv := sdk.NewServer(&sdk.Implementation{Name: "termkeep", Title: "termkeep terminal sessions", Version: opts.Version}, &sdk.ServerOptions{
		Logger:                    log,
		SubscribeHandler:          res.subscribe,
		UnsubscribeHandler:        res.unsubscribe,
		Instructions:              instructions + opts.Scope.note(),
		Capabilities:              &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
		SupportedProtocolVersions: protocolVersions,
	})
	res.srv = srv
	srv.AddResourceTemplate(res.template(), res.read)
	refused := map[string]error{}
	for _, tool := range t.list() {
		// A tool writes unless its annotations say otherwise.
		ro := tool.def.Annotations != nil && tool.def.Annotations.ReadOnlyHint
		if err := opts.Scope.Tool(tool.def.Name, ro); err != nil {
			refused[tool.def.Name] = err
			continue
		}
		srv.AddTool(tool.def, tool.handler)
	}
	srv.AddReceivingMiddleware(res.listScreens)
	if len(refused) > 0 {
		srv.AddReceivingMiddleware(refuseTools(refused))
	}
	return srv
}

// refuseTools answers a call of a tool the scope left out (and tools/list
// did not show) with a tool error saying why, where the SDK would answer
// "unknown tool": a model that remembers the tool from elsewhere learns
// that it is switched off, not misspelled.
func refuseTools(refused map[string]error) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if r, ok := req.(*sdk.CallToolRequest); ok && method == "tools/call" && r.Params != nil {
				if err := refused[r.Params.Name]; err != nil {
					return errorResult(err), nil
				}
			}
			return next(ctx, method, req)
		}
	}
}

// instructions tell a model what the server is for.
const instructions = `termkeep runs programs in terminal sessions that outlive this conversation, its client and the termkeep server itself.
Start one with create_session (a shell by default, or a command; agent starts an AI coding agent). In a shell, run_command types a
command line and returns its exit code, its output and the directory after it. For anything else type with send_input, look with
read_screen (what a person would see) or read_output (everything printed, by byte offset), search the whole log with grep, and block
until something happens with wait_for (text on the screen or in the output, the process's exit, or quiet). list_sessions says what
each session is doing (activity: at_prompt, reading_terminal, waiting_on_events, running, starting). Sessions are named by id or name.`
