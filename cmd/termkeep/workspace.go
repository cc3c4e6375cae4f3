package main

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"termkeep/internal/api"
	"termkeep/internal/client"
)

func newWorkspaceCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "workspace",
		Aliases: []string{"ws"},
		Short:   "Group sessions by project: add, ls, pause, resume, rm",
		Long: `A workspace is a named group of sessions with a directory, usually a project
or a git worktree. ` + "`termkeep new --workspace W`" + ` puts a session in W (creating W with
the session's directory when it does not exist).

Pausing a workspace ends its sessions' processes (SIGHUP, then SIGKILL after
the grace period) and keeps everything else: screens, scrollback, directories
and history. Resuming restores each of them. Removing a workspace ends its
sessions and deletes their data.`,
	}
	cmd.AddCommand(newWorkspaceAddCmd(g), newWorkspaceLsCmd(g),
		newWorkspaceChangeCmd(g, "pause", "End the processes of a workspace's sessions, keeping their state"),
		newWorkspaceChangeCmd(g, "resume", "Restore every paused session of a workspace"),
		newWorkspaceRmCmd(g))
	return cmd
}

func newWorkspaceAddCmd(g *globals) *cobra.Command {
	var autoRestore bool
	cmd := &cobra.Command{
		Use:   "add NAME [DIR]",
		Short: "Create a workspace for DIR (default: the current directory)",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageErr("workspace add needs a NAME and optionally a DIR")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 2 {
				dir = args[1]
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			w, err := c.CreateWorkspace(cmd.Context(), api.WorkspaceRequest{Name: args[0], Dir: abs, AutoRestore: autoRestore})
			if err != nil {
				return err
			}
			fmt.Println(w.Name)
			return nil
		},
	}
	cmd.Flags().BoolVar(&autoRestore, "auto-restore", false, "restore the workspace's interrupted sessions by themselves after a reboot")
	return cmd
}

func newWorkspaceLsCmd(g *globals) *cobra.Command {
	return newListCmd(g, "List workspaces", (*client.Client).Workspaces, table[api.Workspace]{
		header: []string{"NAME", "STATE", "SESSIONS", "RUNNING", "DIR"},
		empty:  "no workspaces (create one with `termkeep workspace add NAME DIR`)",
		row: func(w api.Workspace) []string {
			state := "active"
			if w.Paused {
				state = "paused"
			}
			return []string{w.Name, state, fmt.Sprint(w.Sessions), fmt.Sprint(w.Running), w.Dir}
		},
	})
}

func newWorkspaceChangeCmd(g *globals, action, short string) *cobra.Command {
	return &cobra.Command{
		Use:   action + " NAME",
		Short: short,
		Args:  exactArgs(1, "a workspace NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			ch, err := c.ChangeWorkspace(cmd.Context(), args[0], action)
			if err != nil {
				return err
			}
			for _, e := range ch.Errors {
				fmt.Fprintln(os.Stderr, "termkeep: "+e)
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			for _, s := range ch.Sessions {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", s.ID, refOf(s), s.State)
			}
			return tw.Flush()
		},
	}
}

func newWorkspaceRmCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "End a workspace's sessions, delete their data and the workspace",
		Args:  exactArgs(1, "a workspace NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			return c.RemoveWorkspace(cmd.Context(), args[0])
		},
	}
}
