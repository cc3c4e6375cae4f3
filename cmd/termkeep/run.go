package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"termkeep/internal/runcmd"
	"termkeep/internal/wire"
)

func newRunCmd(g *globals) *cobra.Command {
	var timeout time.Duration
	var cwd string
	var env []string
	cmd := &cobra.Command{
		Use:   "run SESSION [--timeout DURATION] [--cwd DIR] [--env KEY=VALUE]... -- COMMAND",
		Short: "Run a command in a session's shell; print its output, exit with its status",
		Long: `Type COMMAND into the shell of a session at its prompt, wait for it to end, print
only its output (as text, without the echo of the typed line or the prompt),
and exit with its exit status.

  termkeep run work -- make test
  termkeep run work --timeout 10m -- 'go test ./... 2>&1 | tail -5'
  termkeep run work --cwd web --env CI=1 -- npm test
  termkeep run work -- "$(cat script.sh)"

COMMAND may have several lines (a script, a here-document): it runs as one
command with one status. --cwd (relative to the shell's directory) and
--env apply to this command alone: the shell's own directory and
variables are as before after it.

The end and the status come from the shell integration's marks (OSC 133),
which bash, zsh and fish sessions have unless made with
--no-shell-integration; a shell just made is given up to 10 s to draw its
first prompt. A session showing no marks (sh, or no integration) gets
COMMAND between printfs of unique start and end markers, the end one with
the status ($?, fish's $status), and run says so on standard error.

The output is the text a terminal of the session's width shows: colors and
other escape sequences are dropped, a line a CR draws over (a progress bar)
is printed as it ended. Text typed at the prompt before run is not cleared.

Exit codes: the command's status; 124 when --timeout passes first (the
command goes on in the session); 1 when run could not do it (the session is
not at a prompt, it ended, the shell did not report a status).`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErr("%s needs a SESSION and a COMMAND after -- (see `%s --help`)", c.CommandPath(), c.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, line := args[0], strings.Join(args[1:], " ")
			if ref == "" {
				return usageErr("SESSION is empty: give a session's id or name")
			}
			if strings.TrimSpace(line) == "" {
				return usageErr("COMMAND is empty")
			}
			spec := runcmd.Spec{Line: line, Cwd: cwd}
			for _, kv := range env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || !runcmd.EnvName(k) || strings.ContainsRune(v, 0) {
					return usageErr("--env %q: give KEY=VALUE, KEY of letters, digits and _ not starting with a digit", kv)
				}
				spec.Env = append(spec.Env, kv)
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			code, err := runCommand(ctx, g, ref, spec, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil {
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return &exitErr{code: exitTimeout, msg: fmt.Sprintf("timed out; the command goes on in session %s", ref)}
				}
				return err
			}
			if code != 0 {
				return &exitErr{code: code}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after DURATION (e.g. 30s) with exit code 124")
	cmd.Flags().StringVar(&cwd, "cwd", "", "run COMMAND in DIR (relative to the shell's directory), for this command only")
	cmd.Flags().StringArrayVar(&env, "env", nil, "set KEY=VALUE for this command only (repeatable)")
	return cmd
}

// runCommand types spec's line into the session and follows its output from the
// offset the session had reached, printing the command's output to out. It
// returns the command's exit status.
func runCommand(ctx context.Context, g *globals, ref string, spec runcmd.Spec, out, errOut io.Writer) (int, error) {
	c, err := g.connect(ctx)
	if err != nil {
		return 0, err
	}
	run, err := runcmd.Start(ctx, ctx, c, ref, spec, runcmd.ShellStartWait)
	var ended *runcmd.EndedError
	var busy *runcmd.BusyError
	switch {
	case errors.As(err, &ended):
		return 0, fmt.Errorf("%v; `termkeep restore %s` starts it again", err, ref)
	case errors.As(err, &busy):
		return 0, fmt.Errorf("%v; wait for it (termkeep wait %s --output ...) or stop it (termkeep send %s --key C-c)", err, ref, ref)
	case err != nil:
		return 0, apiErr(err)
	}
	if !run.Marked {
		fmt.Fprintf(errOut, "termkeep: session %s shows no shell integration (OSC 133); ending the command with a marker instead\n", ref)
	}
	f := &follower{g: g, c: c, ref: ref, role: wire.RoleWaiter, off: int64(run.From)}
	f.onStopped = stoppedNote
	return f.follow(ctx, func(fr wire.Frame) (bool, int, error) {
		done, code, err := run.Feed(fr, out)
		f.off = int64(run.Next())
		if err != nil && fr.Type == wire.TypeGap {
			err = fmt.Errorf("%v; see `termkeep capture %s`", err, ref)
		}
		return done, code, err
	})
}
