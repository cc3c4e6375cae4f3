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

--all restores what the restore policy brings back: every session the
machine's restart or its holder's death interrupted, except one whose process
is known to have exited; never a closed or exited one.`,
		Args: func(c *cobra.Command, args []string) error {
			if all && len(args) == 0 || !all && len(args) == 1 {
				return emptySession("SESSION", args)
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
					switch {
					case s.Restorable:
						refs = append(refs, s.ID)
					case s.State == "interrupted":
						fmt.Fprintf(os.Stderr, "termkeep: %s: not restored: its process had exited on its own; `termkeep restore %s` starts it again\n", refOf(s), refOf(s))
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
	cmd.Flags().BoolVar(&all, "all", false, "restore every interrupted session the restore policy allows")
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
