package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"termkeep/internal/api"
	"termkeep/internal/runout"
	"termkeep/internal/shellinit"
	"termkeep/internal/shellmark"
	"termkeep/internal/wire"
)

func newRunCmd(g *globals) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "run SESSION [--timeout DURATION] -- COMMAND",
		Short: "Run a command in a session's shell; print its output, exit with its status",
		Long: `Type COMMAND into the shell of a session at its prompt, wait for it to end, print
only its output (as text, without the echo of the typed line or the prompt),
and exit with its exit status.

  termkeep run work -- make test
  termkeep run work --timeout 10m -- 'go test ./... 2>&1 | tail -5'

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
			if strings.TrimSpace(line) == "" || strings.ContainsAny(line, "\r\n") {
				return usageErr("COMMAND must be one non-empty line")
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			code, err := runCommand(ctx, g, ref, line, cmd.OutOrStdout(), cmd.ErrOrStderr())
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
	return cmd
}

// runCommand types line into the session and follows its output from the
// offset the session had reached, printing the command's output to out. It
// returns the command's exit status.
func runCommand(ctx context.Context, g *globals, ref, line string, out, errOut io.Writer) (int, error) {
	c, err := g.connect(ctx)
	if err != nil {
		return 0, err
	}
	sess, err := c.Get(ctx, ref)
	if err != nil {
		return 0, apiErr(err)
	}
	if sess.State != "running" {
		return 0, fmt.Errorf("session %s is %s; `termkeep restore %s` starts it again", ref, sess.State, ref)
	}
	// A shell made with integration marks its first prompt soon after it
	// starts: a run right after `termkeep new` waits for it rather than
	// taking the shell for one without.
	integrated := sess.ShellIntegration && shellinit.Kind(sess.Command) != ""
	for deadline := time.Now().Add(shellStartWait); integrated && sess.Shell != nil &&
		sess.Shell.State == string(shellmark.Unknown) && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if sess, err = c.Get(ctx, ref); err != nil {
			return 0, apiErr(err)
		}
	}
	var r runout.Reader
	typed := line
	if sess.Shell != nil && sess.Shell.State == string(shellmark.Running) {
		what := "a command"
		if sess.Shell.Command != "" {
			what = strconv.Quote(sess.Shell.Command)
		}
		return 0, fmt.Errorf("session %s is running %s, not at its prompt; wait for it (termkeep wait %s --output ...) or stop it (termkeep send %s --key C-c)", ref, what, ref, ref)
	}
	if sess.Shell != nil && sess.Shell.State == string(shellmark.AtPrompt) {
		r = runout.NewMarked(sess.End, sess.Cols)
	} else {
		token := newToken()
		typed = runout.Typed(line, token, statusVar(sess.Command))
		r = runout.NewMarkers(token, sess.Cols)
		fmt.Fprintf(errOut, "termkeep: session %s shows no shell integration (OSC 133); ending the command with a marker instead\n", ref)
	}
	f := &follower{g: g, c: c, ref: ref, role: wire.RoleWaiter, off: int64(sess.End)}
	if _, err := c.Send(ctx, ref, api.SendRequest{Text: typed, Enter: true}); err != nil {
		return 0, apiErr(err)
	}
	return f.follow(ctx, func(fr wire.Frame) (bool, int, error) {
		switch fr.Type {
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(fr.Payload)
			f.advance(off, len(data))
			code, done, err := r.Write(off, data, out)
			return err != nil || done, code, err
		case wire.TypeGap:
			_, to, _ := wire.ParseGap(fr.Payload)
			f.off = int64(to)
			return true, 0, fmt.Errorf("part of the command's output is lost from session %s's log; see `termkeep capture %s`", ref, ref)
		case wire.TypeExit:
			return true, 0, fmt.Errorf("session %s ended before the command did", ref)
		}
		return false, 0, nil
	})
}

// newToken returns a token for the markers of one run: random, so that no
// output but the run's own printf prints them.
func newToken() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// shellStartWait bounds how long run waits for a new shell's first prompt.
const shellStartWait = 10 * time.Second

// statusVar is how the session's shell names the last status: fish has
// $status, POSIX shells $?.
func statusVar(command []string) string {
	if len(command) > 0 && filepath.Base(command[0]) == "fish" {
		return "$status"
	}
	return "$?"
}
