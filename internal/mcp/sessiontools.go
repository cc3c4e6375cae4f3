package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/wire"
)

// Bounds of grep's answer.
const (
	defaultMaxHits = 100
	maxMaxHits     = 10000
)

// errEnough stops a grep once it has the hits it answers with.
var errEnough = errors.New("enough hits")

// ---- grep ---------------------------------------------------------------

type hitView struct {
	Offset uint64     `json:"offset"`
	Time   *time.Time `json:"time,omitempty"`
	Line   string     `json:"line"`
}

func (t *tools) grep(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Session    string `json:"session"`
		Pattern    string `json:"pattern"`
		IgnoreCase bool   `json:"ignore_case"`
		Literal    bool   `json:"literal"`
		MaxHits    *int   `json:"max_hits"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := needSession(a.Session); err != nil {
		return nil, err
	}
	if a.Pattern == "" {
		return nil, argErr("argument \"pattern\" is required: the text or RE2 regular expression to look for")
	}
	limit := defaultMaxHits
	if a.MaxHits != nil {
		if *a.MaxHits < 1 || *a.MaxHits > maxMaxHits {
			return nil, argErr("max_hits must be 1..%d", maxMaxHits)
		}
		limit = *a.MaxHits
	}
	b, err := t.backend(ctx)
	if err != nil {
		return nil, err
	}
	ref, err := t.inScope(ctx, b, a.Session)
	if err != nil {
		return nil, err
	}
	hits := []hitView{}
	more := false
	// The newest hits matter most (the last error): keep a window of the
	// last limit, and say that earlier ones were left out.
	err = b.Grep(ctx, ref, a.Pattern, client.GrepOptions{IgnoreCase: a.IgnoreCase, Literal: a.Literal}, func(h api.GrepHit) error {
		if len(hits) == limit {
			hits, more = append(hits[:0], hits[1:]...), true
		}
		hits = append(hits, hitView{Offset: h.Offset, Time: h.Time, Line: h.Line})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"hits": hits, "earlier_left_out": more}, nil
}

// ---- resize -------------------------------------------------------------

func (t *tools) resize(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Session string `json:"session"`
		Cols    int    `json:"cols"`
		Rows    int    `json:"rows"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := needSession(a.Session); err != nil {
		return nil, err
	}
	if a.Cols < 1 || a.Rows < 1 || a.Cols > wire.MaxDim || a.Rows > wire.MaxDim {
		return nil, argErr("cols and rows must both be 1..%d", wire.MaxDim)
	}
	b, err := t.backend(ctx)
	if err != nil {
		return nil, err
	}
	ref, err := t.inScope(ctx, b, a.Session)
	if err != nil {
		return nil, err
	}
	s, err := b.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	if s.State != "running" {
		return nil, fmt.Errorf("session %s is %s%s; only a running session has a size to change", a.Session, s.State, exitNote(s))
	}
	s, err = b.Resize(ctx, s.ID, a.Cols, a.Rows)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"session": s.ID, "cols": s.Cols, "rows": s.Rows}
	if s.Cols != a.Cols || s.Rows != a.Rows {
		out["note"] = "the session kept another size: a person's terminal attached to it has the say (the server's size policy)"
	}
	return out, nil
}

// ---- restore ------------------------------------------------------------

func (t *tools) restore(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Session string `json:"session"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := needSession(a.Session); err != nil {
		return nil, err
	}
	b, err := t.backend(ctx)
	if err != nil {
		return nil, err
	}
	ref, err := t.inScope(ctx, b, a.Session)
	if err != nil {
		return nil, err
	}
	s, err := b.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	if s.State == "running" {
		return nil, fmt.Errorf("session %s is running; restore starts only an ended one", a.Session)
	}
	// What a restore runs is held to the command rules as a new session is.
	if s.RestoreCommand != "" {
		err = t.opts.Scope.CommandLine(s.RestoreCommand)
	} else {
		err = t.opts.Scope.Command(s.Command, t.opts.Env)
	}
	if err != nil {
		return nil, err
	}
	r, err := b.Restore(ctx, s.ID, t.opts.Env)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"id": r.Session.ID, "name": r.Session.Name, "state": r.Session.State, "cwd": r.Session.Cwd,
		"command": r.Session.Command}
	if r.Session.RestoreCommand != "" {
		out["restore_command"] = r.Session.RestoreCommand
	}
	if len(r.Notices) > 0 {
		out["notices"] = r.Notices
	}
	return out, nil
}
