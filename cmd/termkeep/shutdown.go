package main

import (
	"errors"

	"github.com/spf13/cobra"

	"termkeep/internal/client"
	"termkeep/internal/statedir"
)

func newShutdownCmd(g *globals) *cobra.Command {
	var sessions bool
	cmd := &cobra.Command{
		Use:   "shutdown",
		Short: "Stop the server (sessions keep running unless --sessions)",
		Long: `Stop the server. Sessions keep running (unless --sessions), and the
next server finds them.

The stop sticks: attach, wait and run clients that were connected say
so and wait for a server, without starting one themselves, as tmux's
clients never bring back a killed server. The next command you type
(termkeep ls, new, attach, ...) starts a server as usual, and they
reconnect to it. A server that dies unexpectedly (a crash, SIGKILL) is
started again by its clients at once; SIGTERM (a service stop) and
Ctrl-C on termkeep serve count as stops on purpose, as this one.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var c *client.Client
			if sessions {
				var err error
				if c, err = g.connect(cmd.Context()); err != nil {
					return err
				}
			} else {
				dir, err := statedir.Resolve(g.stateDir)
				if err != nil {
					return err
				}
				c = client.New(dir)
			}
			err := c.Shutdown(cmd.Context(), sessions)
			if errors.Is(err, client.ErrNoServer) {
				return nil // nothing to stop
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&sessions, "sessions", false, "end every session too")
	return cmd
}
