package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"termkeep/internal/api"
	"termkeep/internal/client"
)

func newUserCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Users who reach their own sessions from a browser: add, ls, rm",
		Long: `Users other than you (the owner, the OS user running the server) reach the
server only through its browser listener, with the tokens you make for them
(` + "`termkeep token create --user NAME`" + `). A user sees and controls only the
sessions it created there. Users are names for access, not OS accounts: their
sessions run as you.

Warning: ` + api.WritableWarning + `.`,
	}
	cmd.AddCommand(newUserAddCmd(g), newUserLsCmd(g), newUserRmCmd(g))
	return cmd
}

func newUserAddCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "add NAME",
		Short: "Add a user",
		Long: `Add a user, who reaches the server only with the tokens you make for it
(` + "`termkeep token create --user NAME`" + `).

Warning: ` + api.WritableWarning + `.`,
		Args: exactArgs(1, "a user NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			u, err := c.AddUser(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Println(u.Name)
			fmt.Fprintf(os.Stderr, "Warning: %s; only its --read-only tokens are narrower than your own access.\n", api.WritableWarning)
			return nil
		},
	}
}

func newUserLsCmd(g *globals) *cobra.Command {
	return newListCmd(g, "List users, the owner first", (*client.Client).Users, table[api.User]{
		header: []string{"NAME", "ROLE", "ACTIVE TOKENS", "ADDED"},
		row: func(u api.User) []string {
			role, added := "user", "-"
			if u.Owner {
				role = "owner"
			}
			if u.CreatedAt != nil {
				added = ago(*u.CreatedAt)
			}
			return []string{u.Name, role, fmt.Sprint(u.Tokens), added}
		},
	})
}

// user rm writes: it targets a user, not a session, and with --force ends
// the user's running sessions.
func newUserRmCmd(g *globals) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a user and revoke its tokens",
		Long: `Remove a user. Every token of the user is revoked: its viewers are
disconnected and its event streams end. A user who owns running sessions is
not removed unless --force, which closes them first (as ` + "`termkeep kill`" + `).
The user's ended sessions stay listed for you until ` + "`termkeep rm`" + `;
a user added again under the same name would see them. You, the owner,
cannot be removed.`,
		Args: exactArgs(1, "a user NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			out, err := c.RemoveUser(cmd.Context(), args[0], force)
			if err != nil {
				return err
			}
			fmt.Println(out.Name)
			if len(out.TokensRevoked) > 0 || len(out.SessionsClosed) > 0 {
				fmt.Fprintf(os.Stderr, "revoked %s%s\n", countOf(out.TokensRevoked, "token"), closedNote(out.SessionsClosed))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "close the user's running sessions first")
	return cmd
}

// countOf is "1 token (ID)" or "2 tokens (ID, ID)".
func countOf(ids []string, thing string) string {
	if len(ids) != 1 {
		thing += "s"
	}
	s := fmt.Sprintf("%d %s", len(ids), thing)
	if len(ids) > 0 {
		s += " (" + strings.Join(ids, ", ") + ")"
	}
	return s
}

func closedNote(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ", closed " + countOf(ids, "session")
}
