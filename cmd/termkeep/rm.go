package main

import (
	"github.com/spf13/cobra"
)

func newRmCmd(g *globals) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "rm SESSION...",
		Short: "Remove ended sessions and their data",
		Args:  minArgs(1, "at least one SESSION (id or name)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			for _, ref := range args {
				if err := c.Remove(cmd.Context(), ref, force); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&force, "force", "f", false, "kill a running session first")
	return cmd
}
