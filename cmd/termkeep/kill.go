package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func newKillCmd(g *globals) *cobra.Command {
	return withTarget(&cobra.Command{
		Use:     "kill SESSION",
		Aliases: []string{"kill-session"},
		Short:   "End a session (SIGHUP, then SIGKILL after a grace period)",
		Long:    "End a session: its processes get SIGHUP, then SIGKILL after the server's grace period.\nReturns once the session has ended. Killing an ended session succeeds.",
		Args:    exactArgs(1, "a SESSION (id or name)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			s, err := c.Kill(cmd.Context(), args[0])
			if err == nil && s.Forced != "" {
				fmt.Fprintf(os.Stderr, "termkeep: session %s: %s\n", s.ID, s.Forced)
			}
			return err
		},
	})
}
