package mcp

// read_screen and read_output: what a session shows and what it printed.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"termkeep/internal/wire"
)

// ---- read_screen ------------------------------------------------------

func (t *tools) readScreen(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Session    string `json:"session"`
		Scrollback int    `json:"scrollback"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := needSession(a.Session); err != nil {
		return nil, err
	}
	if a.Scrollback < 0 || a.Scrollback > maxScrollback {
		return nil, argErr("scrollback must be 0..%d lines", maxScrollback)
	}
	// A server that has just restarted may still be rebuilding the
	// screen from the log: ask again, within this call's own deadline.
	rctx, cancel := context.WithTimeout(ctx, defaultTimeout)
	defer cancel()
	var text string
	var rows int
	err := t.again(rctx, func(b Backend) error {
		ref, err := t.inScope(rctx, b, a.Session)
		if err != nil {
			return err
		}
		if a.Scrollback > 0 {
			s, err := b.Get(rctx, ref)
			if err != nil {
				return err
			}
			rows = s.Rows
		}
		text, err = b.Screen(rctx, ref, false, a.Scrollback)
		return err
	})
	if err != nil {
		return nil, err
	}
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.TrimRight(text, " \n")}}}
	if note := scrollbackNote(text, rows, a.Scrollback); note != "" {
		res.Content = append(res.Content, &sdk.TextContent{Text: note})
	}
	return res, nil
}

// scrollbackNote says, when the history above the screen is shorter than
// the scrollback asked for, how much there was: the screen model keeps a
// bounded history (10,000 lines unless configured), and a short answer
// must not pass for all there is. rows is the screen's height (0: unknown,
// no note).
func scrollbackNote(text string, rows, asked int) string {
	if rows <= 0 || asked <= 0 {
		return ""
	}
	history := strings.Count(text, "\n") - rows
	if history < 0 || history >= asked {
		return ""
	}
	return fmt.Sprintf("[scrollback: %d lines asked; the session's screen keeps %d lines of history above it. read_output has all output still logged.]", asked, history)
}

// ---- read_output ------------------------------------------------------

type gapView struct {
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
}

func (t *tools) readOutput(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Session   string  `json:"session"`
		Offset    *uint64 `json:"offset"`
		MaxBytes  *int    `json:"max_bytes"`
		Raw       bool    `json:"raw"`
		TailLines *int    `json:"tail_lines"`
		TailBytes *int    `json:"tail_bytes"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := needSession(a.Session); err != nil {
		return nil, err
	}
	limit := defaultMaxBytes
	if a.MaxBytes != nil {
		if *a.MaxBytes < 1 || *a.MaxBytes > maxMaxBytes {
			return nil, argErr("max_bytes must be 1..%d", maxMaxBytes)
		}
		limit = *a.MaxBytes
	}
	if a.Offset != nil && *a.Offset > 1<<62 {
		return nil, argErr("offset %d is not a byte offset", *a.Offset)
	}
	tailing := a.TailLines != nil || a.TailBytes != nil
	switch {
	case a.TailLines != nil && a.TailBytes != nil:
		return nil, argErr("give tail_lines or tail_bytes, not both")
	case tailing && a.Offset != nil:
		return nil, argErr("give offset (read on from there) or a tail (read the end), not both")
	case a.TailLines != nil && (*a.TailLines < 1 || *a.TailLines > maxTailLines):
		return nil, argErr("tail_lines must be 1..%d", maxTailLines)
	case a.TailBytes != nil && (*a.TailBytes < 1 || *a.TailBytes > maxMaxBytes):
		return nil, argErr("tail_bytes must be 1..%d", maxMaxBytes)
	case a.TailBytes != nil:
		limit = *a.TailBytes
	}
	b, ref, err := t.resolve(ctx, a.Session)
	if err != nil {
		return nil, err
	}
	// Without an offset, from the oldest byte kept: the stream starts at 0
	// and skips what retention dropped, which is then no news.
	from := uint64(0)
	if a.Offset != nil {
		from = *a.Offset
	}
	if tailing {
		// The last limit bytes: tail_bytes, or the window tail_lines are
		// looked for in (max_bytes).
		s, err := b.Get(ctx, ref)
		if err != nil {
			return nil, err
		}
		from = s.End - min(s.End, uint64(limit))
	}
	st, err := b.Follow(ctx, ref, int64(from))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	stop := context.AfterFunc(ctx, func() { st.Close() })
	defer stop()
	w := st.Welcome()
	end := w.End // what was there when the stream began: read no further
	var data []byte
	var gaps []gapView
	off, start := from, from
	ended := w.Exited
	cut := false // stopped at a gap: nothing can complete what came before it
	for off < end && len(data) < limit {
		f, err := st.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("read the output of %s: %w", a.Session, err)
		}
		switch f.Type {
		case wire.TypeOutput:
			o, p, err := wire.ParseOutput(f.Payload)
			if err != nil {
				return nil, err
			}
			if o != off {
				if len(data) > 0 {
					end, cut = off, true // a jump: stop before it, the next read reports it
					continue
				}
				if a.Offset != nil || o > w.First {
					gaps = append(gaps, gapView{From: off, To: o})
				}
				off, start = o, o
			}
			p = p[:min(len(p), limit-len(data), int(end-off))]
			data = append(data, p...)
			off += uint64(len(p))
		case wire.TypeGap:
			g0, g1, err := wire.ParseGap(f.Payload)
			if err != nil {
				return nil, err
			}
			if len(data) > 0 {
				end, cut = off, true // report it on the next read, where it starts
				continue
			}
			if a.Offset != nil || g1 > w.First {
				gaps = append(gaps, gapView{From: g0, To: g1})
			}
			off, start = g1, g1
		case wire.TypeExit:
			ended = true
			end = off
		case wire.TypeError:
			_, msg, _ := wire.ParseError(f.Payload)
			return nil, errors.New(msg)
		}
	}
	// Bytes of a character or a sequence cut at the end wait for the next
	// read, unless nothing can follow them: the end, or a gap.
	final := (cut || ended && off >= w.End) && len(data) < limit
	skip := 0
	if tailing && start > w.First {
		skip = tornStart(data) // the window may begin inside a character
	}
	var offs []uint64
	c := cleaner{raw: a.Raw, collapse: true, src: &offs, base: start + uint64(skip)}
	text, used := c.clean(nil, data[skip:], final)
	if used == 0 && len(data) > skip && len(data) >= limit {
		offs = offs[:0]
		c = cleaner{raw: a.Raw, collapse: true, src: &offs, base: start + uint64(skip)}
		text, used = c.clean(nil, data[skip:], true) // a sequence longer than max_bytes: no way around it
	}
	used += skip
	next := start + uint64(used)
	truncated := tailing && start > w.First
	if a.TailLines != nil {
		if i := lastLines(text, *a.TailLines); i > 0 {
			start, text, truncated = offs[i], text[i:], true
		}
	}
	out := map[string]any{
		"text":        string(text),
		"offset":      start,
		"next_offset": next,
		"end_offset":  max(w.End, off),
		"more":        next < w.End,
	}
	if tailing {
		out["truncated"] = truncated
	}
	if len(gaps) > 0 {
		out["gap"] = gaps[0]
	}
	return out, nil
}

// lastLines returns where the last n lines of text start (0: text has n
// lines or fewer). A line is ended by "\n"; text after the last "\n" (a
// prompt) is a line of its own.
func lastLines(text []byte, n int) int {
	end := len(text)
	if end > 0 && text[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if text[i] == '\n' {
			if n--; n == 0 {
				return i + 1
			}
		}
	}
	return 0
}

// tornStart is how many bytes at the start of p continue a UTF-8
// character that began before it.
func tornStart(p []byte) int {
	n := 0
	for n < len(p) && n < utf8.UTFMax-1 && !utf8.RuneStart(p[n]) {
		n++
	}
	return n
}
