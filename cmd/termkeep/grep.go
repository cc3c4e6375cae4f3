package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"

	"github.com/spf13/cobra"

	"termkeep/internal/api"
	"termkeep/internal/client"
)

// grep reads a session's log; it writes nothing to the session.
func newGrepCmd(g *globals) *cobra.Command {
	var opt client.GrepOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "grep SESSION PATTERN [-i] [-F] [-m N] [--json]",
		Short: "Search everything a session printed (still retained) for a pattern",
		Long: `Search a session's whole retained output log, not only its screen and
scrollback, for lines matching PATTERN (Go regexp syntax; -F takes it as plain text,
-i ignores case, -m N stops after N hits).
A line's text is what a terminal showed of it: escape sequences are left out
and a carriage return overwrites (a progress bar's line is its last state); a
full-screen program's rows count as lines.

Each hit prints as OFFSET TIME  LINE: the offset of the first byte of the
line's first match (termkeep export --from OFFSET starts there) and when the
match was on the screen whole, to the second (a command typed at a prompt is
timed when it was typed, not when its prompt was printed). --json prints one
object per line: {"offset", "end", "time", "line"}, end being the offset
after the match's last byte.
Like grep, the exit code is 1 when nothing matches.`,
		Args: exactArgs(2, "a SESSION (id or name) and a PATTERN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := regexp.Compile(args[1]); err != nil && !opt.Literal {
				return usageErr("pattern %q: %v (-F searches for it as plain text)", args[1], err)
			}
			if opt.Limit < 0 {
				return usageErr("--max-count %d: want a number of hits", opt.Limit)
			}
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			enc := json.NewEncoder(os.Stdout)
			found := false
			err = c.Grep(cmd.Context(), args[0], args[1], opt, func(h api.GrepHit) error {
				found = true
				if asJSON {
					return enc.Encode(h)
				}
				at := "-"
				if h.Time != nil {
					at = h.Time.Local().Format("2006-01-02 15:04:05")
				}
				_, err := fmt.Fprintf(os.Stdout, "%d %s  %s\n", h.Offset, at, h.Line)
				return err
			})
			if err != nil {
				return err
			}
			if !found {
				return &exitErr{code: exitError}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&opt.IgnoreCase, "ignore-case", "i", false, "ignore case")
	f.BoolVarP(&opt.Literal, "fixed-strings", "F", false, "PATTERN is plain text, not a regexp")
	f.IntVarP(&opt.Limit, "max-count", "m", 0, "stop after this many hits (0: all)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object per hit")
	return cmd
}
