package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"termkeep/internal/mcp"
)

func newMCPCmd(g *globals) *cobra.Command {
	var logLevel string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve termkeep's sessions to an AI agent (Model Context Protocol over stdio)",
		Long: `Speak the Model Context Protocol (revision ` + mcp.ProtocolVersion + `) on standard input and output, for
an AI agent's client to start: its tools create sessions, type into them,
read their screen and output, wait for text, an exit or quiet, and end them.

  claude mcp add termkeep -- termkeep mcp
  {"mcpServers": {"termkeep": {"command": "termkeep", "args": ["mcp"]}}}

Standard output carries only protocol messages; logs go to standard error.
A termkeep server is started when a tool needs one and none runs (unless
--no-autostart). New sessions get this process's environment and run in its
directory unless told otherwise. See docs/agents.md.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var lv slog.Level
			if err := lv.UnmarshalText([]byte(strings.ToLower(logLevel))); err != nil {
				return usageErr("--log-level must be debug, info, warn or error, not %q", logLevel)
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))
			return mcp.Serve(cmd.Context(), os.Stdin, os.Stdout, mcp.Options{
				Version: version,
				Log:     log,
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
	return cmd
}
