package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"
)

func newCaptureCmd(g *globals) *cobra.Command {
	var (
		raw  bool
		from string
	)
	cmd := &cobra.Command{
		Use:   "capture SESSION --raw [--from OFFSET]",
		Short: "Print a session's output",
		Long: `Print a session's output. With --raw: the exact bytes the session printed, from
OFFSET (default: the oldest byte still retained) to its current end.`,
		Args: exactArgs(1, "a SESSION (id or name)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !raw {
				return usageErr("capture prints raw output only for now: add --raw")
			}
			var fromOff *uint64
			if from != "" {
				v, err := strconv.ParseUint(from, 10, 64)
				if err != nil {
					return usageErr("--from %q is not a byte offset", from)
				}
				fromOff = &v
			}
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			out, err := c.Output(cmd.Context(), args[0], fromOff)
			if err != nil {
				return err
			}
			defer out.Close()
			want := out.End - out.First
			if fromOff != nil {
				want = out.End - *fromOff
			}
			n, err := io.Copy(os.Stdout, out)
			if err != nil {
				return fmt.Errorf("read output: %w", err)
			}
			if uint64(n) != want {
				return fmt.Errorf("output cut short: got %d of %d bytes (retention may have dropped them meanwhile)", n, want)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&raw, "raw", false, "the exact logged bytes")
	cmd.Flags().StringVar(&from, "from", "", "first byte offset (default: the oldest retained)")
	return cmd
}
