package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"termkeep/internal/wire"
)

// matchWindow is how much cleaned output a match in the output may span:
// older text is dropped as new text comes.
const matchWindow = 64 << 10

// screenPoll is how often the screen is looked at again while no output
// arrives (output makes it look at once).
const screenPoll = time.Second

type waitArgs struct {
	Session   string  `json:"session"`
	Text      string  `json:"text"`
	Regex     string  `json:"regex"`
	Offset    *uint64 `json:"offset"`
	Exit      bool    `json:"exit"`
	QuietMs   *int64  `json:"quiet_ms"`
	TimeoutMs *int64  `json:"timeout_ms"`
}

// matcher finds the first match in s: its byte range.
type matcher func(s string) (start, end int, ok bool)

func (t *tools) waitFor(ctx context.Context, raw json.RawMessage) (any, error) {
	var a waitArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := needSession(a.Session); err != nil {
		return nil, err
	}
	conds := 0
	for _, set := range []bool{a.Text != "", a.Regex != "", a.Exit, a.QuietMs != nil} {
		if set {
			conds++
		}
	}
	if conds != 1 {
		return nil, argErr("give exactly one of text, regex, exit: true or quiet_ms")
	}
	var match matcher
	switch {
	case a.Text != "" && a.Offset == nil:
		match = func(s string) (int, int, bool) { return findLiteral(s, a.Text) }
	case a.Text != "":
		match = func(s string) (int, int, bool) {
			i := strings.Index(s, a.Text)
			return i, i + len(a.Text), i >= 0
		}
	case a.Regex != "":
		re, err := regexp.Compile(a.Regex)
		if err != nil {
			return nil, argErr("regex: %v", err)
		}
		match = func(s string) (int, int, bool) {
			loc := re.FindStringIndex(s)
			if loc == nil {
				return 0, 0, false
			}
			return loc[0], loc[1], true
		}
	}
	if a.Offset != nil && match == nil {
		return nil, argErr("offset goes with text or regex (it says where in the output to look)")
	}
	if a.Offset != nil && *a.Offset > 1<<62 {
		return nil, argErr("offset %d is not a byte offset", *a.Offset)
	}
	var quiet time.Duration
	if a.QuietMs != nil {
		if *a.QuietMs < 1 || time.Duration(*a.QuietMs)*time.Millisecond > maxTimeout {
			return nil, argErr("quiet_ms must be 1..%d", maxTimeout.Milliseconds())
		}
		quiet = time.Duration(*a.QuietMs) * time.Millisecond
	}
	timeout := defaultTimeout
	if a.TimeoutMs != nil {
		if *a.TimeoutMs < 0 || time.Duration(*a.TimeoutMs)*time.Millisecond > maxTimeout {
			return nil, argErr("timeout_ms must be 0..%d (10 minutes)", maxTimeout.Milliseconds())
		}
		timeout = time.Duration(*a.TimeoutMs) * time.Millisecond
	}

	// The deadline covers the whole wait, a server that restarts during it
	// included: the wait carries on against the new one.
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer reportProgress(ctx, timeout, func(waited time.Duration) string {
		return fmt.Sprintf("waiting in session %s for %s", a.Session, fmtDuration(waited))
	})()
	seen := false // a server answered: its going away is then a restart
	for {
		out, err := t.waitOnce(ctx, wctx, a, match, quiet, &seen)
		switch {
		case err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			return timedOut(timeout), nil
		case err == nil || !seen || !transient(err):
			return out, err
		}
		t.opts.Log.Info("mcp: the server went away during wait_for; waiting for it", "session", a.Session, "err", err)
		if err := t.reconnect(wctx, a.Session); err != nil {
			switch {
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case wctx.Err() != nil:
				return nil, errRestarted("the wait", timeout)
			}
			return nil, err // the new server knows no such session
		}
	}
}

// waitOnce is one wait_for against one server: it ends with the wait's
// answer, or the error that ended the server's part in it.
func (t *tools) waitOnce(ctx, wctx context.Context, a waitArgs, match matcher, quiet time.Duration, seen *bool) (any, error) {
	b, err := t.backend(wctx)
	if err != nil {
		return nil, err
	}
	ref, err := t.inScope(wctx, b, a.Session)
	if err != nil {
		return nil, err
	}
	s, err := b.Get(wctx, ref)
	if err != nil {
		return nil, err
	}
	*seen = true
	if a.Exit && s.State != "running" {
		return exitedResult(s.State, s.ExitCode, 0, s.Reason, s.End), nil
	}
	// After a restart the wait starts over: from the same offset (a match
	// in the output is found again where it was), or from now.
	from := wire.FromEnd
	if a.Offset != nil {
		from = int64(*a.Offset)
	}
	st, err := b.Follow(wctx, s.ID, from)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	w := &waiter{b: b, id: s.ID, ref: a.Session, events: follow(wctx, st), off: st.Welcome().Start}
	switch {
	case a.Exit:
		return w.exit(wctx)
	case quiet > 0:
		return w.quiet(wctx, quiet)
	case a.Offset != nil:
		return w.output(wctx, match)
	}
	return w.screen(wctx, match)
}

func timedOut(d time.Duration) map[string]any {
	return map[string]any{"timed_out": true, "waited_ms": d.Milliseconds()}
}

func exitedResult(state string, code *int, signal int, reason string, end uint64) map[string]any {
	out := map[string]any{"exited": true, "state": state, "exit_code": code, "end_offset": end}
	if signal != 0 {
		out["signal"] = signal
	}
	if reason != "" {
		out["reason"] = reason
	}
	return out
}

// event is one frame of a followed stream, copied off it.
type event struct {
	typ  wire.Type
	off  uint64 // output and gap: where it starts
	to   uint64 // gap: where output goes on
	data []byte // output
	exit wire.Exit
	err  error // the stream failed (or the wait is over)
}

// follow reads st in a goroutine of its own until it ends or ctx is done
// (which closes st).
func follow(ctx context.Context, st Stream) <-chan event {
	ch := make(chan event, 16)
	stop := context.AfterFunc(ctx, func() { st.Close() })
	go func() {
		defer stop()
		defer close(ch)
		send := func(e event) bool {
			select {
			case ch <- e:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			f, err := st.Next()
			if err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				send(event{err: err})
				return
			}
			var e event
			switch f.Type {
			case wire.TypeOutput:
				off, data, perr := wire.ParseOutput(f.Payload)
				e = event{typ: f.Type, off: off, data: append([]byte(nil), data...), err: perr}
			case wire.TypeGap:
				from, to, perr := wire.ParseGap(f.Payload)
				e = event{typ: f.Type, off: from, to: to, err: perr}
			case wire.TypeExit:
				e = event{typ: f.Type}
				e.err = wire.ParseJSON(f.Payload, &e.exit)
			case wire.TypeError:
				_, msg, _ := wire.ParseError(f.Payload)
				e = event{err: errors.New(msg)}
			default:
				continue
			}
			if !send(e) || e.err != nil || e.typ == wire.TypeExit {
				return
			}
		}
	}()
	return ch
}

// waiter is one wait_for in progress.
type waiter struct {
	b      Backend
	id     string // the session's id
	ref    string // as the caller named it
	events <-chan event
	off    uint64 // the followed stream's position
}

// next returns the next event; a stream that ended without an exit frame
// is an error.
func (w *waiter) next(ctx context.Context) (event, error) {
	select {
	case e, ok := <-w.events:
		if !ok {
			if ctx.Err() != nil {
				return e, ctx.Err()
			}
			return e, fmt.Errorf("the stream of session %s ended: %w", w.ref, errStreamEnded)
		}
		if e.err != nil {
			return e, e.err
		}
		switch e.typ {
		case wire.TypeOutput:
			w.off = e.off + uint64(len(e.data))
		case wire.TypeGap:
			w.off = e.to
		}
		return e, nil
	case <-ctx.Done():
		return event{}, ctx.Err()
	}
}

func (w *waiter) exited(e wire.Exit) map[string]any {
	return exitedResult(e.State, e.ExitCode, e.Signal, e.Reason, max(e.End, w.off))
}

func (w *waiter) exit(ctx context.Context) (any, error) {
	for {
		e, err := w.next(ctx)
		if err != nil {
			return nil, err
		}
		if e.typ == wire.TypeExit {
			return w.exited(e.exit), nil
		}
	}
}

func (w *waiter) quiet(ctx context.Context, d time.Duration) (any, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			return map[string]any{"quiet": true, "quiet_ms": d.Milliseconds(), "end_offset": w.off}, nil
		case e, ok := <-w.events:
			if !ok || e.err != nil || e.typ == wire.TypeExit {
				// Let next report it the one way.
				return w.settle(ctx, e, ok)
			}
			if e.typ == wire.TypeOutput {
				w.off = e.off + uint64(len(e.data))
				timer.Reset(d)
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// settle turns the end of the stream into the wait's answer.
func (w *waiter) settle(ctx context.Context, e event, ok bool) (any, error) {
	switch {
	case !ok && ctx.Err() != nil:
		return nil, ctx.Err()
	case !ok:
		return nil, fmt.Errorf("the stream of session %s ended: %w", w.ref, errStreamEnded)
	case e.err != nil:
		return nil, e.err
	}
	return w.exited(e.exit), nil
}

// output matches in the cleaned output from the stream's start on.
func (w *waiter) output(ctx context.Context, match matcher) (any, error) {
	var (
		hay     []byte   // cleaned text, at most about 2*matchWindow bytes
		absOffs []uint64 // for each byte of hay, the offset of what it came from
		src     []byte   // bytes the cleaner has not consumed yet (a cut sequence)
		srcOff  = w.off  // the offset of src[0]
	)
	find := func() (map[string]any, bool) {
		i, j, ok := match(string(hay))
		if !ok {
			return nil, false
		}
		end := srcOff // all of hay's bytes come from below srcOff
		if j < len(hay) {
			end = absOffs[j]
		}
		return map[string]any{"matched": true, "where": "output", "text": string(hay[i:j]), "offset": absOffs[i], "end_offset": end}, true
	}
	feed := func(final bool) {
		c := cleaner{src: &absOffs, base: srcOff}
		var used int
		hay, used = c.clean(hay, src, final)
		src = append(src[:0], src[used:]...)
		srcOff += uint64(used)
		if len(hay) > 2*matchWindow {
			cut := len(hay) - matchWindow
			for cut < len(hay) && !utf8.RuneStart(hay[cut]) {
				cut++
			}
			hay = append(hay[:0], hay[cut:]...)
			absOffs = append(absOffs[:0], absOffs[cut:]...)
		}
	}
	for {
		e, err := w.next(ctx)
		if err != nil {
			return nil, err
		}
		switch e.typ {
		case wire.TypeOutput:
			if e.off != srcOff+uint64(len(src)) {
				// A jump (the bytes are gone): nothing matches across it.
				hay, absOffs, src, srcOff = hay[:0], absOffs[:0], src[:0], e.off
			}
			src = append(src, e.data...)
			feed(false)
			if r, ok := find(); ok {
				return r, nil
			}
		case wire.TypeGap:
			hay, absOffs, src, srcOff = hay[:0], absOffs[:0], src[:0], e.to
		case wire.TypeExit:
			feed(true)
			if r, ok := find(); ok {
				return r, nil
			}
			r := w.exited(e.exit)
			r["matched"] = false
			return r, nil
		}
	}
}

// screen matches on the rendered screen: now, after each burst of output,
// and every screenPoll.
func (w *waiter) screen(ctx context.Context, match matcher) (any, error) {
	look := func() (map[string]any, error) {
		text, err := w.b.Screen(ctx, w.id, false, 0)
		if err != nil {
			return nil, err
		}
		text = screenText(text)
		i, j, ok := match(text)
		if !ok {
			return nil, nil
		}
		line := strings.Count(text[:i], "\n")
		lines := strings.Split(text, "\n")
		return map[string]any{"matched": true, "where": "screen", "text": text[i:j], "line": line + 1,
			"line_text": strings.TrimRight(lines[line], " ")}, nil
	}
	tick := time.NewTicker(screenPoll)
	defer tick.Stop()
	for {
		r, err := look()
		if err != nil || r != nil {
			return r, err
		}
		select {
		case <-tick.C:
		case e, ok := <-w.events:
			if !ok || e.err != nil || e.typ == wire.TypeExit {
				if r, err := look(); err == nil && r != nil {
					return r, nil
				}
				res, err := w.settle(ctx, e, ok)
				if m, isMap := res.(map[string]any); isMap {
					m["matched"] = false
				}
				return res, err
			}
			// A burst of output: let it settle a moment before rendering.
			select {
			case <-time.After(30 * time.Millisecond):
			case <-ctx.Done():
			}
			w.drain()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// drain takes the events already queued, keeping an end for later.
func (w *waiter) drain() {
	for {
		select {
		case e, ok := <-w.events:
			if !ok || e.err != nil || e.typ == wire.TypeExit {
				// Put the end back in front: a fresh channel that yields it.
				ch := make(chan event, 1)
				if ok {
					ch <- e
				}
				close(ch)
				w.events = ch
				return
			}
		default:
			return
		}
	}
}

// screenText is a rendered screen as wait_for matches on it: each line
// without its trailing blanks, and without the blank lines below the
// last one that has text, so that the end of the text (\z) is where the
// prompt is.
func screenText(screen string) string {
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// findLiteral finds text on a screen's text. The cells right of a line's
// last character are blank on the screen though the text leaves them out,
// so text's trailing spaces also match the end of a line: a prompt "# "
// matches "root#" at the end of the screen. Text of spaces alone matches
// only spaces actually there.
func findLiteral(hay, text string) (int, int, bool) {
	if i := strings.Index(hay, text); i >= 0 {
		return i, i + len(text), true
	}
	base := strings.TrimRight(text, " ")
	if base == "" {
		return 0, 0, false
	}
	for from := 0; ; {
		i := strings.Index(hay[from:], base)
		if i < 0 {
			return 0, 0, false
		}
		i += from
		j := i + len(base)
		k := j
		for k < len(hay) && hay[k] == ' ' && k-j < len(text)-len(base) {
			k++
		}
		if k == len(hay) || hay[k] == '\n' {
			return i, k, true
		}
		from = i + 1
	}
}
