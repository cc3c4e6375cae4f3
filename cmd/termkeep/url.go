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
Opening it once is enough: the browser keeps the token in a cookie and the
address bar drops it. Anyone with this address can use your sessions, so do not
share it. The token lives in the state directory's token file.`,
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
