package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"termkeep/internal/api"
)

func newRestoreCmd(g *globals) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "restore [SESSION | --all]",
		Short: "Start an ended session again where it was",
		Long: `Start a new process in an ended (interrupted, exited or closed) or paused
session: in its last working directory (else its workspace's, else your home,
saying so), at its size, with its saved environment and its shell history,
running its --restore-command when it was created with one. Its screen and
scrollback stay; a line marks where the new process begins.

--all restores every interrupted session (after a reboot).`,
		Args: func(c *cobra.Command, args []string) error {
			if all && len(args) == 0 || !all && len(args) == 1 {
				return nil
			}
			return usageErr("restore needs a SESSION (id or name), or --all")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			refs := args
			if all {
				list, err := c.List(cmd.Context())
				if err != nil {
					return err
				}
				for _, s := range list {
					if s.State == "interrupted" {
						refs = append(refs, s.ID)
					}
				}
				if len(refs) == 0 {
					fmt.Fprintln(os.Stderr, "no interrupted session to restore")
				}
			}
			failed := 0
			for _, ref := range refs {
				r, err := c.Restore(cmd.Context(), ref, os.Environ())
				if err != nil {
					if !all {
						return err
					}
					fmt.Fprintf(os.Stderr, "termkeep: %s: %v\n", ref, err)
					failed++
					continue
				}
				printRestored(r)
			}
			if failed > 0 {
				return &exitErr{code: exitError}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "restore every interrupted session")
	return cmd
}

func printRestored(r api.Restored) {
	for _, n := range r.Notices {
		fmt.Fprintf(os.Stderr, "termkeep: %s: %s\n", refOf(r.Session), n)
	}
	fmt.Println(r.Session.ID)
}

func refOf(s api.Session) string {
	if s.Name != "" {
		return s.Name
	}
	return s.ID
}
