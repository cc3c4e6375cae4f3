package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"termkeep/internal/api"
)

func newLsCmd(g *globals) *cobra.Command {
	var (
		asJSON    bool
		workspace string
	)
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List sessions, by workspace",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			list, err := c.List(cmd.Context())
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("workspace") {
				list = slices.DeleteFunc(list, func(s api.Session) bool { return s.Workspace != workspace })
			}
			// By workspace (sessions without one first), oldest first within.
			slices.SortStableFunc(list, func(a, b api.Session) int { return strings.Compare(a.Workspace, b.Workspace) })
			if asJSON {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintln(os.Stderr, "no sessions (start one with `termkeep new`)")
				return nil
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tWORKSPACE\tSTATE\tPID\tSIZE\tCREATED\tCWD\tCOMMAND")
			for _, s := range list {
				state := s.State
				if s.ExitCode != nil {
					state = fmt.Sprintf("%s(%d)", s.State, *s.ExitCode)
				}
				if s.CauseText != "" {
					state += ": " + s.CauseText
				}
				if s.LogStopped != nil {
					state += ", log stopped: " + s.LogStopped.Reason
				}
				if s.Unresponsive {
					state += ", unresponsive: its holder does not answer"
					if s.UnresponsiveSince != nil {
						state += " (since " + ago(*s.UnresponsiveSince) + ")"
					}
				}
				pid := "-"
				if s.Pid != nil {
					pid = fmt.Sprint(*s.Pid)
				}
				name := s.Name
				if name == "" {
					name = "-"
				}
				ws := s.Workspace
				if ws == "" {
					ws = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%dx%d\t%s\t%s\t%s\n", s.ID, name, ws, state, pid, s.Cols, s.Rows,
					ago(s.CreatedAt), s.Cwd, strings.Join(s.Command, " "))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	cmd.Flags().StringVar(&workspace, "workspace", "", "only the sessions of this workspace (\"\" for those of none)")
	return cmd
}

func ago(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.Local().Format("2006-01-02")
}
