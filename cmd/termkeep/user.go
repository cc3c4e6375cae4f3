package main

import (
	"fmt"
	"termkeep/internal/api"
	"termkeep/internal/client"

	"github.com/spf13/cobra"
)

func newUserCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Users who reach their own sessions from a browser: add, ls",
		Long: `Users other than you (the owner, the OS user running the server) reach the
server only through its browser listener, with the tokens you make for them
(` + "`termkeep token create --user NAME`" + `). A user sees and controls only the
sessions it created there. Users are names for access, not OS accounts: their
sessions run as you.`,
	}
	cmd.AddCommand(newUserAddCmd(g), newUserLsCmd(g))
	return cmd
}

func newUserAddCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "add NAME",
		Short: "Add a user",
		Args:  exactArgs(1, "a user NAME"),
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
