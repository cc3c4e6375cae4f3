package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"termkeep/internal/client"
)

// table is how an `ls` command shows its items: a header, one row of cells
// an item, and what to say when there are none ("" says nothing).
type table[T any] struct {
	header []string
	row    func(T) []string
	empty  string
}

// newListCmd is an `ls` command: it fetches a list through the server and
// prints it as t, or as a JSON array with --json.
func newListCmd[T any](g *globals, short string, fetch func(*client.Client, context.Context) ([]T, error), t table[T]) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: short,
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			list, err := fetch(c, cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				if list == nil {
					list = []T{}
				}
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(list) == 0 && t.empty != "" {
				fmt.Fprintln(os.Stderr, t.empty)
				return nil
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, strings.Join(t.header, "\t"))
			for _, it := range list {
				fmt.Fprintln(tw, strings.Join(t.row(it), "\t"))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}
