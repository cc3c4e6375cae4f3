// Package runcmd runs one command line in a session's shell, as `termkeep
// run` and the MCP tool run_command do: it types the line at the shell's
// prompt and reads that command's own output, up to its end mark and exit
// status (OSC 133, from termkeep's shell integration), or, in a shell
// that shows no marks, between markers the typed line prints itself.
//
// Start does the talking to the server (Server); the caller follows the
// session's stream from Run.From and hands each frame to Run.Feed, which
// does no I/O but writing the command's text to the writer given.
package runcmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/readiness"
	"termkeep/internal/runout"
	"termkeep/internal/screen"
	"termkeep/internal/shellinit"
	"termkeep/internal/shellmark"
	"termkeep/internal/wire"
)

// ShellStartWait bounds how long Start waits for a new shell's first
// prompt.
const ShellStartWait = 10 * time.Second

// Server is what a run needs of a termkeep server.
type Server interface {
	Get(ctx context.Context, ref string) (api.Session, error)
	Send(ctx context.Context, ref string, req api.SendRequest) (api.Sent, error)
}

// EndedError is a session that is not running: no command can be typed.
type EndedError struct{ Ref, State string }

func (e *EndedError) Error() string { return fmt.Sprintf("session %s is %s", e.Ref, e.State) }

// BusyError is a session that is not at its shell's prompt: a line
// typed now would go to whatever reads the terminal instead (a running
// command, a program's question, the shell's prompt hooks).
type BusyError struct {
	Ref     string
	Command string // the running command's line, when the shell marked it
	// Hooks: the command ended, and the shell's prompt hooks have not
	// given it its prompt back yet.
	Hooks bool
	// State is the session's activity state when the kernel's word
	// decided it (api.Activity.Kernel): reading_terminal,
	// waiting_on_events, running, starting; "" otherwise. Pid and
	// Program are the foreground process it named, Unread the bytes
	// typed that nothing has read yet.
	State   string
	Pid     int
	Program string
	Unread  int
}

func (e *BusyError) Error() string {
	fg := ""
	if e.Program != "" {
		fg = fmt.Sprintf("%s (pid %d)", e.Program, e.Pid)
	}
	switch {
	case e.Unread > 0:
		return fmt.Sprintf("session %s is not at its prompt: %d bytes typed at it are not read yet", e.Ref, e.Unread)
	case e.State == string(readiness.ReadingTerminal) && fg != "":
		return fmt.Sprintf("session %s is not at its prompt: %s is reading the terminal%s", e.Ref, fg, e.running())
	case e.State == string(readiness.WaitingOnEvents) && fg != "":
		return fmt.Sprintf("session %s is not at its prompt: %s waits for input among other events (an editor, a pager, a REPL)%s", e.Ref, fg, e.running())
	case e.State == string(readiness.Starting):
		return fmt.Sprintf("session %s is not at its prompt: its shell has not drawn its first prompt yet", e.Ref)
	case e.Hooks:
		return fmt.Sprintf("session %s is not at its prompt: its last command ended, and its prompt hooks still run%s", e.Ref, inFg(fg))
	}
	what := "a command"
	if e.Command != "" {
		what = strconv.Quote(e.Command)
	}
	return fmt.Sprintf("session %s is running %s, not at its prompt%s", e.Ref, what, inFg(fg))
}

// running is ", running CMD" when the shell marked the command.
func (e *BusyError) running() string {
	if e.Command == "" || e.Hooks {
		return ""
	}
	return ", running " + strconv.Quote(e.Command)
}

func inFg(fg string) string {
	if fg == "" {
		return ""
	}
	return " (in the foreground: " + fg + ")"
}

// busy is the refusal of session ref, whose shell and activity are as
// sess says; nil when a line may be typed: at the prompt the kernel
// vouches for, or, where the kernel's word is not known, when the shell
// does not say it runs something.
func busy(ref string, sess api.Session) *BusyError {
	e := &BusyError{Ref: ref}
	if sh := sess.Shell; sh != nil {
		e.Command = sh.Command
		e.Hooks = sh.State == string(shellmark.Returning)
	}
	if a := sess.Activity; a != nil && a.Kernel || a != nil && a.State == string(readiness.Starting) {
		if a.State == string(readiness.AtPrompt) {
			return nil
		}
		e.State, e.Pid, e.Program, e.Unread = a.State, a.Pid, a.Program, a.Unread
		return e
	}
	if sh := sess.Shell; sh != nil && (sh.State == string(shellmark.Running) || e.Hooks) {
		return e
	}
	return nil
}

// Run is one command typed into a session.
type Run struct {
	Ref     string
	Session api.Session // as it was before the line was typed
	// Marked says that the shell's marks bound the command; without them
	// the typed line prints markers around it.
	Marked bool
	// Own says that the session's program is the command (Once): it
	// ends with the session.
	Own bool
	// From is the session's output end before the line was typed: follow
	// the stream from there.
	From uint64
	r    runout.Reader
	next uint64 // the offset after the last byte fed
	// marks watches for the prompt after the command's end: the shell
	// reports its directory (OSC 7) just before it.
	marks      shellmark.Scanner
	ended      bool
	endAt      uint64 // r.next when the end was read
	promptBack bool
	// after reads what the shell prints between the command's end and its
	// prompt, for the directory it reports (OSC 7), with the screen
	// model's own parser.
	after *screen.Screen
}

// Spec is a command to run and how to read its output.
type Spec struct {
	Line string // shell, one line or several
	// Cwd and Env (KEY=VALUE) are the command's directory (relative to
	// the shell's) and variables, for this command only.
	Cwd string
	Env []string
	// Raw reads the output's bytes as the terminal got them (escape
	// sequences, CRs) rather than its text; only where the shell's marks
	// bound it (the markers' output is always text).
	Raw bool
}

// EnvName reports whether k may name a Spec.Env variable: letters,
// digits and _, not starting with a digit.
func EnvName(k string) bool {
	if k == "" || '0' <= k[0] && k[0] <= '9' {
		return false
	}
	for _, c := range []byte(k) {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// Start types spec's line into session ref's shell at its prompt. A shell just
// made with integration is given up to wait for its first prompt rather
// than taken for one without; a session that is not running, or is not
// at its prompt, is refused (EndedError, BusyError) before anything is
// typed. Where the kernel's word is known (the session's activity says
// so) the line is typed only at_prompt: never while a program reads the
// terminal, waits on it, or typing waits unread. The wait for the prompt
// ends with wctx too (the caller's time for the command); the server's
// answers are bounded by ctx alone.
func Start(ctx, wctx context.Context, srv Server, ref string, spec Spec, wait time.Duration) (*Run, error) {
	sess, err := srv.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	if sess.State != "running" {
		return nil, &EndedError{Ref: ref, State: sess.State}
	}
	integrated := sess.ShellIntegration && shellinit.Kind(sess.Command) != ""
	// A new shell's first prompt, and the prompt after a command's end
	// (its prompt hooks run first), are waited for: a line typed before
	// the prompt is read by whatever reads the terminal first.
	for deadline := time.Now().Add(wait); waitPrompt(sess, integrated) && time.Now().Before(deadline); {
		select {
		case <-wctx.Done():
			// The caller's time ran out before the prompt came: say what
			// the session is doing, not that the server was slow.
			if e := busy(ref, sess); e != nil {
				return nil, e
			}
			return nil, fmt.Errorf("session %s did not show its prompt within the time given: nothing was typed", ref)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		next, err := srv.Get(ctx, ref)
		if err != nil {
			return nil, err
		}
		sess = next
	}
	if e := busy(ref, sess); e != nil {
		return nil, e
	}
	run := &Run{Ref: ref, Session: sess, From: sess.End, next: sess.End}
	run.marks.Emit = func(m shellmark.Mark) {
		if _, end := run.Output(); run.ended && m.Kind == shellmark.Prompt && m.At >= end {
			run.promptBack = true
		}
	}
	shell := ""
	if len(sess.Command) > 0 {
		shell = filepath.Base(sess.Command[0])
	}
	typed := typedLine(shell, spec)
	if sess.Shell != nil && sess.Shell.State == string(shellmark.AtPrompt) {
		m := runout.NewMarked(sess.End, sess.Cols)
		m.Raw, m.PromptSP = spec.Raw, shellinit.Kind(sess.Command) == "zsh"
		run.Marked, run.r = true, m
	} else {
		token := newToken()
		typed = runout.Typed(typed, token, statusVar(sess.Command))
		run.r = runout.NewMarkers(token, sess.Cols)
	}
	if _, err := srv.Send(ctx, sess.ID, api.SendRequest{Text: typed, Enter: true}); err != nil {
		return nil, err
	}
	return run, nil
}

// Once reads the command that session sess runs as its program (a shell's
// -c, made for the command): its output is the session's whole output,
// its status the session's exit status.
func Once(sess api.Session, raw bool) *Run {
	w := runout.NewWhole(sess.Cols)
	w.Raw = raw
	return &Run{Ref: sess.ID, Session: sess, r: w, Own: true}
}

// PromptBack reports whether the shell's prompt after the command has
// been fed: by then the server knows the directory the command left.
func (r *Run) PromptBack() bool { return r.promptBack }

// Cwd is the directory the shell reported after the command (OSC 7), ""
// when it reported none.
func (r *Run) Cwd() string {
	if r.after == nil {
		return ""
	}
	return r.after.Cwd()
}

// Next is the offset to follow the stream from after a reconnection.
func (r *Run) Next() uint64 { return r.next }

// Feed takes the next frame of the session's stream and writes the
// command's output in it to out as text. done is set once the command
// ended (code is its status) or the run cannot go on (err).
func (r *Run) Feed(fr wire.Frame, out io.Writer) (done bool, code int, err error) {
	switch fr.Type {
	case wire.TypeOutput:
		off, data, perr := wire.ParseOutput(fr.Payload)
		if perr != nil {
			return true, 0, perr
		}
		if off+uint64(len(data)) <= r.next && len(data) > 0 {
			return false, 0, nil // seen already (a stream reopened)
		}
		if off < r.next {
			data, off = data[r.next-off:], r.next
		}
		r.next = off + uint64(len(data))
		var code int
		var err error
		if !r.ended {
			code, r.ended, err = r.r.Write(off, data, out)
			r.endAt = r.next
		}
		if r.ended && !r.promptBack {
			if r.after == nil {
				r.after = screen.New(80, 2, screen.Options{})
			}
			tail := data
			if _, end := r.Output(); end > off { // the end is in this chunk: only what follows it
				tail = data[min(end-off, uint64(len(data))):]
			}
			r.after.Write(tail)
		}
		r.marks.Write(off, time.Time{}, data)
		return err != nil || r.ended, code, err
	case wire.TypeGap:
		_, to, _ := wire.ParseGap(fr.Payload)
		r.next = max(r.next, to)
		return true, 0, fmt.Errorf("part of the command's output is lost from session %s's log", r.Ref)
	case wire.TypeExit:
		if !r.Own {
			return true, 0, fmt.Errorf("session %s ended before the command did", r.Ref)
		}
		var ex wire.Exit
		if err := wire.ParseJSON(fr.Payload, &ex); err != nil {
			return true, 0, err
		}
		r.ended, r.endAt = true, r.next
		if err := r.r.(*runout.Whole).Flush(out); err != nil {
			return true, 0, err
		}
		if ex.ExitCode == nil {
			return true, 1, fmt.Errorf("session %s ended (%s) with no exit status", r.Ref, ex.State)
		}
		return true, *ex.ExitCode, nil
	case wire.TypeError:
		_, msg, _ := wire.ParseError(fr.Payload)
		return true, 0, fmt.Errorf("session %s: %s", r.Ref, msg)
	}
	return false, 0, nil
}

// Output is the command's output in the session's log, [start, end):
// between its marks, or with markers from where the line was typed to
// the end marker (the echo of the typed line included). It is whole once
// Feed said done; before that end is the output read so far.
func (r *Run) Output() (start, end uint64) {
	if m, ok := r.r.(*runout.Marked); ok {
		if s, e, ok := m.Range(); ok {
			return s, min(e, r.next)
		}
		return r.next, r.next
	}
	if r.ended {
		return r.From, r.endAt
	}
	return r.From, r.next
}

// waitPrompt reports whether a shell is still to come to its prompt:
// starting (with integration, before its first marks; without, before
// the kernel sees it wait on its terminal), or while its prompt hooks
// run.
func waitPrompt(sess api.Session, integrated bool) bool {
	if a := sess.Activity; a != nil && a.State == string(readiness.Starting) {
		return true
	}
	sh := sess.Shell
	return integrated && sh != nil && (sh.State == string(shellmark.Unknown) || sh.State == string(shellmark.Returning))
}

// newToken returns a token for the markers of one run: random, so that no
// output but the run's own printf prints them.
func newToken() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// statusVar is how the session's shell names the last status: fish has
// $status, POSIX shells $?.
func statusVar(command []string) string {
	if len(command) > 0 && filepath.Base(command[0]) == "fish" {
		return "$status"
	}
	return "$?"
}
