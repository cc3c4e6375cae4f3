package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"termkeep/internal/api"
	"termkeep/internal/export"
)

func newCaptureCmd(g *globals) *cobra.Command {
	var (
		raw        bool
		ansi       bool
		scrollback int
		from, at   string
	)
	cmd := &cobra.Command{
		Use:   "capture SESSION [--at TIME|OFFSET] [--ansi] [--scrollback N] | --raw [--from OFFSET]",
		Short: "Print a session's screen, now or at a moment of its past, or its raw output",
		Long: `Print a session's screen as it is now, rendered by the server's terminal
emulator (like tmux capture-pane -p): plain text, or with colors and
attributes with --ansi; the visible screen only, unless --scrollback N adds up
to N lines of history above it.

With --at: the screen as it was at that moment, rendered from the session's
output log (whatever it printed up to then, and no more). TIME is an RFC 3339
time or a duration before now such as 5m, as export --from takes it; OFFSET a
byte offset of the output. A moment before the oldest byte still retained is
that byte.

With --raw: the exact bytes the session printed, from OFFSET (default: the
oldest byte still retained) to its current end.`,
		Args: exactArgs(1, "a SESSION (id or name)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if raw && (ansi || scrollback != 0) {
				return usageErr("--raw prints bytes, not a screen: drop --ansi and --scrollback")
			}
			if !raw && from != "" {
				return usageErr("--from needs --raw")
			}
			if raw && at != "" {
				return usageErr("--at shows a screen; --raw prints bytes: use --raw --from OFFSET for the bytes from an offset")
			}
			var moment string
			if at != "" {
				b, err := export.ParseBound(at, time.Now())
				if err != nil {
					return usageErr("--at: %v", err)
				}
				moment = b.String() // a duration becomes the time it means now
			}
			if scrollback < 0 {
				return usageErr("--scrollback must be 0 or more lines")
			}
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			if moment != "" {
				format := "text"
				if ansi {
					format = "ansi"
				}
				s, err := c.ReplayScreen(cmd.Context(), args[0], moment, format, scrollback)
				if err != nil {
					return err
				}
				_, err = os.Stdout.Write(s.Body)
				return err
			}
			if !raw {
				text, err := c.Screen(cmd.Context(), args[0], ansi, scrollback)
				if err != nil {
					return err
				}
				_, err = io.WriteString(os.Stdout, text)
				return err
			}
			var fromOff *uint64
			if from != "" {
				v, err := strconv.ParseUint(from, 10, 64)
				if err != nil {
					return usageErr("--from %q is not a byte offset", from)
				}
				fromOff = &v
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
			for _, g := range out.Gaps() {
				if g.Reason == api.GapDamaged {
					fmt.Fprintf(os.Stderr, "termkeep: bytes %d-%d are lost to damage in the session's log files; the output skips them\n", g.Start, g.End)
				} else {
					fmt.Fprintf(os.Stderr, "termkeep: bytes %d-%d were never logged (%s); the output skips them\n", g.Start, g.End, g.Reason)
				}
				want -= g.End - g.Start
			}
			if uint64(n) != want {
				return fmt.Errorf("output cut short: got %d of %d bytes (the log was trimmed or is damaged; see the server log)", n, want)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&raw, "raw", false, "the exact logged bytes instead of the rendered screen")
	f.BoolVar(&ansi, "ansi", false, "keep colors and attributes (SGR escape sequences)")
	f.IntVar(&scrollback, "scrollback", 0, "add up to N lines of history above the screen")
	f.StringVar(&from, "from", "", "with --raw: first byte offset (default: the oldest retained)")
	f.StringVar(&at, "at", "", "the screen at a moment: an RFC 3339 time, a duration before now (5m) or a byte offset")
	return cmd
}
