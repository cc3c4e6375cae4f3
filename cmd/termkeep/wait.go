package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"termkeep/internal/wire"
)

func newWaitCmd(g *globals) *cobra.Command {
	var (
		forExit    bool
		statusOnly bool
		output     string
		timeout    time.Duration
		from       string
	)
	cmd := &cobra.Command{
		Use:   "wait SESSION (--exit [--status-only] | --output TEXT [--from start|OFFSET]) [--timeout DURATION]",
		Short: "Wait for a session to exit or to print TEXT",
		Long: `Block until the session exits (--exit) or prints TEXT (--output).

--exit: the exit code is the child's status (128+N for signal N), so a
child that failed with 1 or 2 looks like wait's own error or usage error
to a script. --status-only prints the status on standard output instead
and exits 0 once the session has ended, whatever its status:

  status=$(termkeep wait build --exit --status-only)

--output: TEXT (a literal string) is looked for in the raw output printed
after wait starts; --from start searches from the oldest retained byte
(output already printed counts), --from OFFSET from that offset.
Mind the echo: after "termkeep send work 'make'", the shell echoes the
typed line, so "wait work --output make" may match that echo, not make's
output. "termkeep run work -- make" waits for the command itself and
prints only its output.

Exit codes: 0 found or ended (with --status-only); the child's status
(--exit); 124 on --timeout; 1 if the session ends without TEXT.`,
		Args: exactArgs(1, "a SESSION (id or name)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if forExit == (output != "") {
				return usageErr("give exactly one of --exit or --output TEXT")
			}
			if statusOnly && !forExit {
				return usageErr("--status-only goes with --exit")
			}
			start := int64(wire.FromEnd)
			switch from {
			case "", "now", "end":
			case "start":
				start = 0
			default:
				v, err := strconv.ParseInt(from, 10, 64)
				if err != nil || v < 0 {
					return usageErr("--from %q is not an offset or \"now\"", from)
				}
				start = v
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			c, err := g.connect(ctx)
			if err != nil {
				return timeoutOr(ctx, err)
			}
			f := &follower{g: g, c: c, ref: args[0], role: wire.RoleWaiter, off: start}
			f.onStopped = stoppedNote
			code, err := waitFor(ctx, f, []byte(output))
			if err != nil {
				return timeoutOr(ctx, err)
			}
			if statusOnly {
				fmt.Fprintln(cmd.OutOrStdout(), code)
				return nil
			}
			if code != 0 {
				return &exitErr{code: code}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&forExit, "exit", false, "wait for the session to end; exit with its status")
	f.BoolVar(&statusOnly, "status-only", false, "with --exit: print the status and exit 0, whatever it is")
	f.StringVar(&output, "output", "", "wait for TEXT (a literal string) in the raw output")
	f.DurationVar(&timeout, "timeout", 0, "give up after DURATION (e.g. 30s) with exit code 124")
	f.StringVar(&from, "from", "", "search output from OFFSET, or \"start\" for the oldest retained byte (default: output printed after wait starts)")
	return cmd
}

func timeoutOr(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &exitErr{code: exitTimeout, msg: "timed out"}
	}
	return err
}

// waitFor follows the session. With text empty it returns the session's
// exit code when it ends; otherwise 0 as soon as text appears, and 1 if the
// session ends first.
func waitFor(ctx context.Context, f *follower, text []byte) (int, error) {
	var tail []byte // the last len(text)-1 bytes seen, for matches across frames
	return f.follow(ctx, func(fr wire.Frame) (bool, int, error) {
		switch fr.Type {
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(fr.Payload)
			if f.off >= 0 && off != uint64(f.off) {
				tail = tail[:0] // a jump: nothing spans it
			}
			f.advance(off, len(data))
			if len(text) > 0 {
				hay := append(tail, data...)
				if bytes.Contains(hay, text) {
					return true, 0, nil
				}
				keep := min(len(hay), len(text)-1)
				tail = append(tail[:0], hay[len(hay)-keep:]...)
			}
		case wire.TypeGap:
			_, to, _ := wire.ParseGap(fr.Payload)
			f.off = int64(to)
			tail = tail[:0]
		case wire.TypeExit:
			var e wire.Exit
			wire.ParseJSON(fr.Payload, &e)
			if len(text) > 0 {
				return true, 1, fmt.Errorf("session %s ended without printing %q", f.ref, text)
			}
			if e.ExitCode == nil {
				return true, 1, fmt.Errorf("session %s was %s: %s", f.ref, e.State, e.Reason)
			}
			return true, *e.ExitCode, nil
		}
		return false, 0, nil
	})
}
