package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"termkeep/internal/api"
	"termkeep/internal/session/sizepolicy"
)

func newResizeCmd(g *globals) *cobra.Command {
	var policy string
	cmd := &cobra.Command{
		Use:     "resize SESSION [COLSxROWS]",
		Aliases: []string{"resize-window"},
		Short:   "Give a session a fixed size, or set whose size it follows",
		Long: `Give a session a size and keep it there: its size policy becomes fixed, so
no viewer changes it (as tmux's resize-window). Viewers of another size clip,
scale or pan. --policy switches the policy while the session runs:
  latest    the last writable viewer to type or fit (the default)
  smallest  the smallest columns and rows of the writable viewers
  largest   the largest columns and rows of the writable viewers
  fixed     the size it has now, or the one given`,
		Example: "  termkeep resize build 120x40\n  termkeep resize build --policy latest",
		Args:    minArgs(1, "a SESSION (id or name)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 2 {
				return usageErr("resize takes a SESSION and at most one COLSxROWS, not %q", args[2:])
			}
			var req api.SizeRequest
			if len(args) == 2 {
				cols, rows, err := parseSize(args[1])
				if err != nil {
					return usageErr("%v", err)
				}
				req.Cols, req.Rows = uint16(cols), uint16(rows)
			}
			if policy != "" {
				p, err := sizepolicy.Parse(policy)
				if err != nil {
					return usageErr("--policy: %v", err)
				}
				if len(args) == 2 && p != sizepolicy.Fixed {
					return usageErr("a size is kept only by the fixed policy: give COLSxROWS or --policy %s, not both", p)
				}
				req.SizePolicy = string(p)
			}
			if len(args) == 1 && policy == "" {
				return usageErr("give COLSxROWS, --policy, or both")
			}
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			s, err := c.Size(cmd.Context(), args[0], req)
			if err != nil {
				return apiErr(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%dx%d %s\n", s.Cols, s.Rows, s.SizePolicy)
			return nil
		},
	}
	cmd.Flags().StringVar(&policy, "policy", "", "whose size the session follows: latest, smallest, largest or fixed")
	return cmd
}
