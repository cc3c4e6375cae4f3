package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"termkeep/internal/client"
	"termkeep/internal/statedir"
)

// url reads the files the server writes in the state directory: it needs
// no server round-trip and starts none.
func newURLCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "url",
		Short: "Print the address to open termkeep in a browser, with its access token",
		Long: `Print the address to open termkeep in a browser, access token included.
The token is in the address's fragment (#token=…), which the browser sends to
no server. Opening it once is enough: the page swaps the token for a
credential of its own, kept in that page's origin only (never in a cookie),
and drops it from the address bar. That browser stays signed in until it is
unused for 14 days or signed out (the page's Sign out, or
` + "`termkeep token ls --browsers`" + ` and ` + "`termkeep token revoke`" + `).

Anyone with this address can use your sessions, so do not share it. The
token lives in the state directory's token file.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := statedir.Resolve(g.stateDir)
			if err != nil {
				return err
			}
			u, err := client.BrowserURL(dir)
			if err != nil {
				return err
			}
			fmt.Fprintln(os.Stdout, u)
			return nil
		},
	}
}
