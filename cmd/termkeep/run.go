package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"termkeep/internal/api"
	"termkeep/internal/shellmark"
	"termkeep/internal/vtscan"
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
--no-shell-integration. A session showing none (sh, or no integration) gets
COMMAND followed by a printf of a unique end marker with $?, and run says so
on standard error; that needs a POSIX shell's syntax.

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
	var r runReader
	typed := line
	if sess.Shell != nil && sess.Shell.State == string(shellmark.Running) {
		what := "a command"
		if sess.Shell.Command != "" {
			what = strconv.Quote(sess.Shell.Command)
		}
		return 0, fmt.Errorf("session %s is running %s, not at its prompt; wait for it (termkeep wait %s --output ...) or stop it (termkeep send %s --key C-c)", ref, what, ref, ref)
	}
	if sess.Shell != nil && sess.Shell.State == string(shellmark.AtPrompt) {
		r = newMarkedRun(sess.End)
	} else {
		token := newToken()
		typed = fmt.Sprintf("printf '__tk_start_%%s__\\n' %s; %s; printf '\\n__tk_end_%%s_%%d__\\n' %s $?", token, line, token)
		r = newMarkerRun(token)
		fmt.Fprintf(errOut, "termkeep: session %s shows no shell integration (OSC 133); ending the command with a marker instead\n", ref)
	}
	f := &follower{g: g, c: c, ref: ref, role: wire.RoleWaiter, off: int64(sess.End)}
	if _, err := c.Send(ctx, ref, api.SendRequest{Text: typed, Enter: true}); err != nil {
		return 0, apiErr(err)
	}
	for {
		s, err := f.open(ctx, nil)
		if err != nil {
			return 0, err
		}
		stop := context.AfterFunc(ctx, func() { s.Close() })
		for {
			fr, err := s.Next()
			if err != nil {
				break
			}
			switch fr.Type {
			case wire.TypeOutput:
				off, data, _ := wire.ParseOutput(fr.Payload)
				f.advance(off, len(data))
				code, done, err := r.write(off, data, out)
				if err != nil || done {
					stop()
					s.Close()
					return code, err
				}
			case wire.TypeGap:
				_, to, _ := wire.ParseGap(fr.Payload)
				f.off = int64(to)
				stop()
				s.Close()
				return 0, fmt.Errorf("part of the command's output is lost from session %s's log; see `termkeep capture %s`", ref, ref)
			case wire.TypeExit:
				stop()
				s.Close()
				return 0, fmt.Errorf("session %s ended before the command did", ref)
			case wire.TypeError:
				_, msg, _ := wire.ParseError(fr.Payload)
				stop()
				s.Close()
				return 0, errors.New(msg)
			}
		}
		stop()
		s.Close()
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
	}
}

// runReader reads a command's output from the session's stream and says
// when it has ended, with its status.
type runReader interface {
	write(off uint64, p []byte, out io.Writer) (code int, done bool, err error)
}

func newToken() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// markedRun finds the command's start (C) and end (D) marks in the output
// after the offset run started at, and prints the text between them.
type markedRun struct {
	scan       shellmark.Scanner
	from       uint64
	start, end uint64 // [start, end) is the output; end is max until D
	started    bool
	ended      *shellmark.Mark
	text       textFilter
}

func newMarkedRun(from uint64) *markedRun {
	r := &markedRun{from: from, end: ^uint64(0)}
	r.scan.Emit = func(m shellmark.Mark) {
		switch {
		case m.Kind == shellmark.Exec && !r.started && m.At >= r.from:
			r.started, r.start = true, m.End
		case m.Kind == shellmark.Done && r.started && r.ended == nil:
			r.ended, r.end = &m, m.At
		}
	}
	return r
}

func (r *markedRun) write(off uint64, p []byte, out io.Writer) (int, bool, error) {
	r.scan.Write(off, time.Time{}, p)
	if r.started {
		lo, hi := max(off, r.start), min(off+uint64(len(p)), r.end)
		if lo < hi {
			if _, err := out.Write(r.text.filter(p[lo-off : hi-off])); err != nil {
				return 0, true, err
			}
		}
	}
	if r.ended == nil {
		return 0, false, nil
	}
	out.Write(r.text.flush())
	if r.ended.Status == nil {
		return 1, true, errors.New("the shell did not report the command's exit status")
	}
	return statusCode(*r.ended.Status), true, nil
}

// statusCode is the exit code that passes a command's status on.
func statusCode(st int) int {
	if st < 0 || st > 255 {
		return 1
	}
	return st
}

// markerRun finds the lines the typed printfs print around the command's
// output, in a shell that reports no marks.
type markerRun struct {
	startLine string
	endRE     *regexp.Regexp
	text      textFilter
	line      []byte // the text of the line being read
	started   bool
	held      []byte // the last whole line of output, printed once the next one comes
	hasHeld   bool
}

func newMarkerRun(token string) *markerRun {
	return &markerRun{
		startLine: "__tk_start_" + token + "__",
		endRE:     regexp.MustCompile(`^__tk_end_` + token + `_(\d+)__$`),
	}
}

func (r *markerRun) write(_ uint64, p []byte, out io.Writer) (int, bool, error) {
	for _, b := range r.text.filter(p) {
		if b != '\n' {
			r.line = append(r.line, b)
			continue
		}
		l := bytes.TrimRight(r.line, "\r")
		r.line = r.line[:0]
		if !r.started {
			r.started = string(bytes.TrimSpace(l)) == r.startLine
			continue
		}
		if m := r.endRE.FindSubmatch(bytes.TrimSpace(l)); m != nil {
			// The printf's own line break comes before the marker: the
			// line held is the output's last, unless it is that break's.
			if r.hasHeld && len(r.held) > 0 {
				out.Write(append(r.held, '\n'))
			}
			st, _ := strconv.Atoi(string(m[1]))
			return statusCode(st), true, nil
		}
		if r.hasHeld {
			if _, err := out.Write(append(r.held, '\n')); err != nil {
				return 0, true, err
			}
		}
		r.held, r.hasHeld = append(r.held[:0], l...), true
	}
	return 0, false, nil
}

// textFilter keeps the text of terminal output: escape sequences dropped,
// CR LF made LF, other controls but tab, backspace and a lone CR dropped.
type textFilter struct {
	seq vtscan.Scanner
	cr  bool // a CR is held: it is dropped if LF follows
	buf []byte
}

func (t *textFilter) filter(p []byte) []byte {
	t.buf = t.buf[:0]
	for _, b := range p {
		if t.seq.Step(b) != vtscan.Text {
			continue
		}
		if t.cr {
			t.cr = false
			if b != '\n' {
				t.buf = append(t.buf, '\r')
			}
		}
		switch {
		case b == '\r':
			t.cr = true
		case b == '\n' || b == '\t' || b == '\b' || b >= 0x20 && b != 0x7f:
			t.buf = append(t.buf, b)
		}
	}
	return t.buf
}

// flush returns a CR held at the end.
func (t *textFilter) flush() []byte {
	if t.cr {
		t.cr = false
		return []byte{'\r'}
	}
	return nil
}

