package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"termkeep/internal/api"
	"termkeep/internal/runcmd"
)

// promptWait bounds how long run_command reads on after a command's end
// for the prompt that follows it, before the directory it reports.
const promptWait = time.Second

// busy is the sessions a run_command of this server is running in: a
// second one is refused, not typed into the first one's command (the
// shell's marks tell it too, but only once the first has started).
type busy struct {
	mu  sync.Mutex
	ids map[string]string // session id => the command line
}

// take marks id busy with line; ok false (and the line running) when it is.
func (b *busy) take(id, line string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if cur, ok := b.ids[id]; ok {
		return cur, false
	}
	if b.ids == nil {
		b.ids = map[string]string{}
	}
	b.ids[id] = line
	return "", true
}

func (b *busy) release(id string) {
	b.mu.Lock()
	delete(b.ids, id)
	b.mu.Unlock()
}

func (t *tools) runCommand(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Session   string            `json:"session"`
		Command   string            `json:"command"`
		TimeoutMs *int64            `json:"timeout_ms"`
		OnTimeout string            `json:"on_timeout"`
		MaxBytes  *int              `json:"max_bytes"`
		Raw       bool              `json:"raw"`
		Cwd       string            `json:"cwd"`
		Env       map[string]string `json:"env"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Command) == "" || strings.ContainsRune(a.Command, 0) {
		return nil, argErr("command must be shell text, one line or several, not empty")
	}
	env, err := envArg(a.Env)
	if err != nil {
		return nil, err
	}
	if strings.ContainsRune(a.Cwd, 0) {
		return nil, argErr("cwd %q is not a directory's path", a.Cwd)
	}
	switch a.OnTimeout {
	case "", "leave", "interrupt", "kill":
	default:
		return nil, argErr("on_timeout must be leave, interrupt or kill, not %q", a.OnTimeout)
	}
	limit := defaultMaxBytes
	if a.MaxBytes != nil {
		if *a.MaxBytes < 1 || *a.MaxBytes > maxMaxBytes {
			return nil, argErr("max_bytes must be 1..%d", maxMaxBytes)
		}
		limit = *a.MaxBytes
	}
	timeout := defaultTimeout
	if a.TimeoutMs != nil {
		if *a.TimeoutMs < 1 || time.Duration(*a.TimeoutMs)*time.Millisecond > maxTimeout {
			return nil, argErr("timeout_ms must be 1..%d (10 minutes)", maxTimeout.Milliseconds())
		}
		timeout = time.Duration(*a.TimeoutMs) * time.Millisecond
	}
	if err := t.opts.Scope.CommandLine(a.Command); err != nil {
		return nil, err
	}
	spec := runcmd.Spec{Line: a.Command, Raw: a.Raw, Cwd: a.Cwd, Env: env}
	var b Backend
	var run *runcmd.Run
	var release func()
	var wctx context.Context // the call's deadline
	var cancel context.CancelFunc
	if a.Session == "" {
		// timeout_ms is the command's: the new session's start is not.
		b, run, err = t.runOnce(ctx, spec)
		wctx, cancel = context.WithTimeout(ctx, timeout)
	} else {
		wctx, cancel = context.WithTimeout(ctx, timeout)
		b, run, release, err = t.runIn(ctx, wctx, a.Session, spec)
	}
	defer cancel()
	if release != nil {
		defer release()
	}
	if err != nil {
		return nil, err
	}
	s := run.Session
	tail := &runcmd.Tail{Max: limit}
	var read atomic.Uint64 // bytes of output read so far, for the progress reports' goroutine
	defer reportProgress(ctx, timeout, func(waited time.Duration) string {
		return fmt.Sprintf("%s: running for %s, %d bytes of output", a.Command, fmtDuration(waited), read.Load())
	})()
	code, err := t.follow(ctx, wctx, b, run, tail, &read)
	start, end := run.Output()
	text, cut := outputText(tail, a.Raw)
	out := map[string]any{"session": s.ID, "output": text, "truncated": cut, "output_start": start, "output_end": end,
		"shell_integration": run.Marked}
	switch {
	case a.Session == "":
		out["note"] = "the command ran in a session of its own, which ended with it (shell -c); read_output reads it"
	case !run.Marked:
		out["note"] = "the shell showed no termkeep shell integration (OSC 133 marks): the line was typed between printfs of markers, and its status read from the end marker"
	}
	switch {
	case err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		out["timed_out"], out["waited_ms"] = true, timeout.Milliseconds()
		if a.OnTimeout == "" || a.OnTimeout == "leave" {
			out["on_timeout_result"] = "left"
			out["note"] = "the command goes on in the session: read_output from output_end reads on; list_sessions shows activity.state at_prompt once it has ended"
			return out, nil
		}
		return t.stopAtTimeout(ctx, b, run, tail, &read, a.OnTimeout, a.Raw, out)
	case err != nil:
		return nil, err
	}
	out["exit_code"] = code
	// As the shell reported it after the command; else as the server
	// last saw it (from /proc, at most a second old).
	out["cwd"] = run.Cwd()
	if out["cwd"] == "" {
		if after, err := b.Get(ctx, s.ID); err == nil {
			out["cwd"] = after.Cwd
		}
	}
	return out, nil
}

// envArg is run_command's env as KEY=VALUE entries, sorted by name.
func envArg(env map[string]string) ([]string, error) {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !runcmd.EnvName(k) {
			return nil, argErr("env: %q is not a variable name (letters, digits and _, not starting with a digit)", k)
		}
		if strings.ContainsRune(env[k], 0) {
			return nil, argErr("env: the value of %s holds a NUL character, which no variable can", k)
		}
		out = append(out, k+"="+env[k])
	}
	return out, nil
}

// outputText is the output kept in tail; raw output (the terminal's
// bytes) made valid UTF-8, as read_output's raw text is.
func outputText(tail *runcmd.Tail, raw bool) (string, bool) {
	text, cut := tail.Text()
	if raw {
		text = strings.ToValidUTF8(text, string(utf8.RuneError))
	}
	return text, cut
}

// runIn types spec at the prompt of session ref's shell; release frees
// the session for another run_command once this one is over.
func (t *tools) runIn(ctx, wctx context.Context, ref string, spec runcmd.Spec) (_ Backend, _ *runcmd.Run, release func(), _ error) {
	b, s, err := t.lookup(ctx, ref)
	if err != nil {
		return nil, nil, nil, err
	}
	if spec.Cwd != "" {
		// The shell takes a relative cwd from its own directory, which
		// the server knows: checked there before anything is typed.
		dir, known := spec.Cwd, true
		if !filepath.IsAbs(dir) {
			dir, known = filepath.Join(s.Cwd, dir), s.Cwd != ""
		}
		if fi, err := os.Stat(dir); known && (err != nil || !fi.IsDir()) {
			return nil, nil, nil, argErr("cwd %q is not a directory (a relative cwd is taken from the session's directory, %s)", spec.Cwd, s.Cwd)
		}
	}
	if cur, ok := t.running.take(s.ID, spec.Line); !ok {
		return nil, nil, nil, fmt.Errorf("session %s is already running %q for another run_command; wait for that call, or stop the command with send_input keys [\"C-c\"]", ref, cur)
	}
	release = func() { t.running.release(s.ID) }
	// The wait for the shell's prompt is the command's time (wctx); the
	// server's answers are not: on a busy machine they may take longer
	// than a short timeout_ms, which is no reason to say the server did
	// not answer.
	sctx, scancel := context.WithTimeout(ctx, defaultTimeout)
	defer scancel()
	run, err := runcmd.Start(sctx, wctx, b, s.ID, spec, runcmd.ShellStartWait)
	var ended *runcmd.EndedError
	var busy *runcmd.BusyError
	switch {
	case errors.As(err, &ended):
		err = fmt.Errorf("session %s is %s%s; restore starts it again", ref, ended.State, exitNote(s))
	case errors.As(err, &busy) && (busy.State == "reading_terminal" || busy.State == "waiting_on_events"):
		err = fmt.Errorf("%v; read_screen shows what it waits for: answer it with send_input, or stop it with send_input keys [\"C-c\"]", err)
	case errors.As(err, &busy):
		err = fmt.Errorf("%v; wait for it (wait_for, or list_sessions until activity.state is at_prompt) or stop it with send_input keys [\"C-c\"]", err)
	}
	return b, run, release, err
}

// runOnce starts spec as a new session of the scope's workspace, in the
// user's shell with -c (not interactive, as a script runs), which ends
// with the command and is kept, as any ended session, for read_output.
// Its directory is as create_session's; its variables are a new
// session's and spec's.
func (t *tools) runOnce(ctx context.Context, spec runcmd.Spec) (Backend, *runcmd.Run, error) {
	ws, err := t.opts.Scope.CreateWorkspace("")
	if err != nil {
		return nil, nil, err
	}
	shell := "/bin/sh"
	for _, kv := range t.opts.Env {
		if v, ok := strings.CutPrefix(kv, "SHELL="); ok && v != "" {
			shell = v
		}
	}
	req := api.CreateRequest{Command: []string{shell, "-c", spec.Line}, Workspace: ws,
		Env: append(slices.Clone(t.opts.Env), spec.Env...)}
	if err := t.opts.Scope.Command(req.Command, req.Env); err != nil {
		return nil, nil, err
	}
	b, err := t.backend(ctx)
	if err != nil {
		return nil, nil, err
	}
	if req.Cwd, err = t.newCwd(ctx, b, ws, spec.Cwd); err != nil {
		return nil, nil, err
	}
	if fi, err := os.Stat(req.Cwd); err != nil || !fi.IsDir() {
		return nil, nil, argErr("cwd %q is not a directory (a relative cwd is taken from the directory a new session gets, %s)", spec.Cwd, req.Cwd)
	}
	s, err := b.Create(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	return b, runcmd.Once(s, spec.Raw), nil
}

// afterStop is how long a command interrupted or killed at its timeout
// is given to end before run_command says it still runs.
const afterStop = 3 * time.Second

// stopAtTimeout interrupts (Ctrl-C, as typed) or kills (SIGKILL to the
// terminal's foreground process group: the command, never the shell) a
// command whose run_command timed out, and waits afterStop for its end.
func (t *tools) stopAtTimeout(ctx context.Context, b Backend, run *runcmd.Run, tail *runcmd.Tail, read *atomic.Uint64, how string, raw bool, out map[string]any) (any, error) {
	req, did := api.SendRequest{Keys: []string{"C-c"}}, "interrupted"
	if how == "kill" {
		req, did = api.SendRequest{Signal: "KILL"}, "killed"
	}
	var err error
	if how == "kill" && run.Own {
		// Its shell is the session's program, in the command's process
		// group: the session ends with them.
		_, err = b.Kill(ctx, run.Session.ID)
	} else {
		_, err = b.Send(ctx, run.Session.ID, req)
	}
	if err != nil {
		return nil, fmt.Errorf("the command timed out, and could not be %s: %w", did, err)
	}
	sctx, cancel := context.WithTimeout(ctx, afterStop)
	defer cancel()
	code, err := t.follow(ctx, sctx, b, run, tail, read)
	start, end := run.Output()
	text, cut := outputText(tail, raw)
	out["output"], out["truncated"], out["output_start"], out["output_end"] = text, cut, start, end
	if err != nil {
		out["on_timeout_result"] = did + "; still_running"
		out["note"] = fmt.Sprintf("the command was %s and has not ended within %v; read_output from output_end reads on", did, afterStop)
		return out, nil
	}
	out["on_timeout_result"], out["exit_code"] = did, code
	return out, nil
}

// follow reads the session's stream into run until the command ends (and
// with shell integration, its prompt is back, within promptWait), over a
// restart of the server too; wctx is the call's deadline.
func (t *tools) follow(ctx, wctx context.Context, b Backend, run *runcmd.Run, out *runcmd.Tail, read *atomic.Uint64) (int, error) {
	code, done := 0, false
	fctx := wctx // after the command's end: the wait for its prompt
	for {
		st, err := b.Follow(fctx, run.Session.ID, int64(run.Next()))
		if err == nil {
			var fin bool
			fin, code, done, err = t.feed(ctx, wctx, &fctx, st, run, out, read, code, done)
			if fin {
				return code, err
			}
		}
		switch {
		case done:
			return code, nil // the prompt did not come in time: answer without it
		case ctx.Err() != nil:
			return 0, ctx.Err()
		case wctx.Err() != nil:
			return 0, wctx.Err()
		case err != nil && !transient(err):
			return 0, err
		}
		// The server went away: read on from run.Next() once it is back.
		if err := t.reconnect(wctx, run.Ref); err != nil {
			return 0, err
		}
		if b, err = t.backend(wctx); err != nil {
			return 0, err
		}
	}
}

// feed hands st's frames to run until the answer is known (fin) or the
// stream fails (err, to reconnect after unless final).
func (t *tools) feed(ctx, wctx context.Context, fctx *context.Context, st Stream, run *runcmd.Run, out *runcmd.Tail, read *atomic.Uint64, code int, done bool) (fin bool, _ int, _ bool, err error) {
	defer st.Close()
	stop := context.AfterFunc(*fctx, func() { st.Close() })
	defer func() { stop() }()
	for {
		f, err := st.Next()
		if err != nil {
			return false, code, done, fmt.Errorf("%w: %w", errStreamEnded, err)
		}
		ended, c, ferr := run.Feed(f, out)
		start, end := run.Output()
		read.Store(end - start)
		if ferr != nil {
			return true, 0, done, ferr
		}
		if ended && !done {
			done, code = true, c
			if !run.Marked {
				return true, code, done, nil
			}
			pctx, cancel := context.WithTimeout(wctx, promptWait)
			context.AfterFunc(ctx, cancel) // or released with wctx, at the call's end
			*fctx = pctx
			stop()
			stop = context.AfterFunc(pctx, func() { st.Close() })
		}
		if done && run.PromptBack() {
			return true, code, done, nil
		}
	}
}
