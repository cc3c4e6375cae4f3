//go:build !lean

package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"termkeep/internal/cmdpolicy"
	"termkeep/internal/mcp"
)

func newMCPCmd(g *globals) *cobra.Command {
	var logLevel string
	var scope mcp.Scope
	var allow, deny []string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: mcpShort,
		Long: `Speak the Model Context Protocol (revision ` + mcp.ProtocolVersion + `) on standard input and output, for
an AI agent's client to start: its tools create sessions, type into them,
read their screen and output, wait for text, an exit or quiet, and end them.

  claude mcp add termkeep -- termkeep mcp
  {"mcpServers": {"termkeep": {"command": "termkeep", "args": ["mcp"]}}}

Standard output carries only protocol messages; logs go to standard error.
A termkeep server is started when a tool needs one and none runs (unless
--no-autostart). New sessions run in this process's directory unless told
otherwise, and get only the safe part of its environment, and what
--env-allow names:

  ` + strings.Join(mcp.DefaultEnv, " ") + `

Give an agent less than the owner's whole reach:

  termkeep mcp --workspace app                 only workspace app's sessions; new ones join it
  termkeep mcp --read-only                     list, read and wait; no typing, creating or ending
  termkeep mcp --deny-command 'git push' --deny-command rm
  termkeep mcp --allow-command make --allow-command 'go test *'
  termkeep mcp --env-allow ANTHROPIC_API_KEY --env-allow 'AWS_*'

A command pattern is a glob (* any text, ? one character) over a command's
words, matching the whole command or its first words ("make" matches
"make test", not "makeup"). A line is parsed as bash and every command in
it is checked: in pipelines, substitutions, bodies, sh -c scripts, and
what wrappers (env, nice, sudo, xargs, find -exec ...) run; deny wins
over allow. What cannot be known before it runs (eval, an alias, $CMD as
the program, a line bash cannot parse) is refused. With --allow-command,
a redirection writing a file and variables such as PATH or LD_PRELOAD are
refused unless a pattern says so, and a session without a command (the
shell) must match too. Deny patterns catch mistakes, not a program that
deletes by itself (python, find -delete). Anything in a session runs as
the owner and can read the owner's files, the termkeep token included:
only another user (or another state directory) isolates for real. See
docs/agents.md.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var lv slog.Level
			if err := lv.UnmarshalText([]byte(strings.ToLower(logLevel))); err != nil {
				return usageErr("--log-level must be debug, info, warn or error, not %q", logLevel)
			}
			pol, err := cmdpolicy.New(allow, deny)
			if err != nil {
				return usageErr("%v", err)
			}
			if !pol.Empty() {
				scope.Commands = pol
			}
			if err := scope.Check(); err != nil {
				return usageErr("%v", err)
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))
			return mcp.Serve(cmd.Context(), os.Stdin, os.Stdout, mcp.Options{
				Version: version,
				Log:     log,
				Scope:   scope,
				Connect: func(ctx context.Context) (mcp.Backend, error) {
					c, err := g.connect(ctx)
					if err != nil {
						return nil, err
					}
					return mcp.ClientBackend(c), nil
				},
			})
		},
	}
	cmd.Flags().StringVar(&logLevel, "log-level", "warn", "what to log on standard error: debug, info, warn, error")
	cmd.Flags().StringVar(&scope.Workspace, "workspace", "", "see, type into and end only this workspace's sessions; create sessions in it")
	cmd.Flags().BoolVar(&scope.ReadOnly, "read-only", false, "offer only the tools that list, read and wait: none that types, creates or ends")
	cmd.Flags().StringArrayVar(&allow, "allow-command", nil, "start only commands matching this pattern (repeatable; * any text, ? one character)")
	cmd.Flags().StringArrayVar(&deny, "deny-command", nil, "never start a command matching this pattern (repeatable; wins over --allow-command)")
	cmd.Flags().StringArrayVar(&scope.EnvAllow, "env-allow", nil, "pass this variable of the environment on to sessions too (repeatable; NAME, PREFIX* or *)")
	return cmd
}
