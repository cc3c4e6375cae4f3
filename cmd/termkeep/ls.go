package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"termkeep/internal/api"
	"termkeep/internal/client"
)

func newLsCmd(g *globals) *cobra.Command {
	var (
		asJSON    bool
		wide      bool
		workspace string
	)
	cmd := &cobra.Command{
		Use:     "ls [HOST:]",
		Aliases: []string{"list", "list-sessions"},
		Short:   "List sessions, by workspace (HOST: lists another machine's, over ssh)",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("ls takes one HOST: at most (see `termkeep ls --help`)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, newHint, err := lsClient(cmd.Context(), g, args)
			if err != nil {
				return err
			}
			defer c.Close()
			list, err := c.List(cmd.Context())
			if err != nil {
				return err
			}
			health, err := c.Health(cmd.Context())
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
				fmt.Fprintf(os.Stderr, "no sessions (start one with `%s`)\n", newHint)
				return nil
			}
			rows := [][]string{{"ID", "NAME", "WORKSPACE", "STATE", "PID", "SIZE", "CREATED", "CWD", "COMMAND"}}
			for _, s := range list {
				state := lsState(s, health.Protocol)
				pid := "-"
				if s.Pid != nil {
					pid = fmt.Sprint(*s.Pid)
				}
				cwd, command := s.Cwd, strings.Join(s.Command, " ")
				if slices.Contains(s.Unknown, "cwd") {
					cwd = "(unknown)"
				}
				if slices.Contains(s.Unknown, "command") {
					command = "(unknown)"
				}
				rows = append(rows, []string{s.ID, orDash(s.Name), orDash(s.Workspace), state, pid, fmt.Sprintf("%dx%d", s.Cols, s.Rows),
					ago(s.CreatedAt), cwd, command})
			}
			if w := termWidth(); !wide && w > 0 {
				// As docker ps and tmux ls do: one row a session, in the
				// terminal's width (a pipe gets everything).
				if !slices.ContainsFunc(list, func(s api.Session) bool { return s.Workspace != "" }) {
					for i := range rows {
						rows[i] = slices.Delete(rows[i], 2, 3) // no workspaces: no column for them
					}
				}
				n := len(rows[0])
				rows = fitTable(rows, w, 2, []shrink{
					{col: n - 1, min: 8}, {col: n - 2, min: 8, keepEnd: true}, {col: n - 6, min: 8}, {col: 1, min: 8}, {col: 2, min: 8},
				})
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			for _, r := range rows {
				fmt.Fprintln(tw, strings.Join(r, "\t"))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	cmd.Flags().BoolVar(&wide, "wide", false, "print every column whole, however wide the rows get (a pipe always gets them whole)")
	cmd.Flags().StringVar(&workspace, "workspace", "", "only the sessions of this workspace (\"\" for those of none)")
	return cmd
}

// lsClient is ls's client: of this machine's server, or with a HOST:
// argument of that machine's, over ssh; and how a session is started
// there.
func lsClient(ctx context.Context, g *globals, args []string) (*client.Client, string, error) {
	if len(args) == 0 {
		c, err := g.connect(ctx)
		return c, "termkeep new", err
	}
	t, isRemote, err := remoteTarget(args[0])
	if err != nil {
		return nil, "", err
	}
	if !isRemote || t.Session != "" {
		return nil, "", usageErr("ls takes no session: give HOST: to list another machine's sessions, or nothing")
	}
	c, err := remoteClient(ctx, t)
	return c, "termkeep new " + args[0], err
}

// lsState is the STATE column: the state and what else a person should
// know about the session, such as a holder of another protocol version
// than the server's (serverProtocol; 0 from a server that does not say).
func lsState(s api.Session, serverProtocol int) string {
	state := s.State
	if s.ExitCode != nil {
		state = fmt.Sprintf("%s(%d)", s.State, *s.ExitCode)
	}
	if s.CauseText != "" {
		state += ": " + s.CauseText
	}
	if l := s.Lingering; l != nil {
		state = fmt.Sprintf("exited(%d), output lingering", l.ExitCode)
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
	if p := s.HolderProtocol; p != 0 && serverProtocol != 0 && p != serverProtocol && s.State == "running" {
		state += fmt.Sprintf(", holder protocol %d (server %d)", p, serverProtocol)
	}
	return state
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// termWidth is standard output's width when it is a terminal, else 0.
func termWidth() int {
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
		return w
	}
	return 0
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
