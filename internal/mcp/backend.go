package mcp

import (
	"context"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/wire"
)

// Backend is what the tools need of a termkeep server. ClientBackend makes
// one of a *client.Client; tests use a fake.
type Backend interface {
	List(ctx context.Context) ([]api.Session, error)
	Get(ctx context.Context, ref string) (api.Session, error)
	// GetIn is Get with names looked up in workspace ws alone.
	GetIn(ctx context.Context, ws, ref string) (api.Session, error)
	Create(ctx context.Context, req api.CreateRequest) (api.Session, error)
	Workspaces(ctx context.Context) ([]api.Workspace, error)
	Input(ctx context.Context, ref string, data []byte) error
	// Send types text and named keys, encoded for the modes the session's
	// program has set (application cursor keys, bracketed paste).
	Send(ctx context.Context, ref string, req api.SendRequest) (api.Sent, error)
	Screen(ctx context.Context, ref string, ansi bool, scrollback int) (string, error)
	Kill(ctx context.Context, ref string) (api.Session, error)
	// Restore starts an ended session's command again, with env under the
	// variables it saved.
	Restore(ctx context.Context, ref string, env []string) (api.Restored, error)
	// Grep calls fn with each line of the session's whole log that
	// matches, oldest first.
	Grep(ctx context.Context, ref, pattern string, opt client.GrepOptions, fn func(api.GrepHit) error) error
	// Resize asks for the session to be cols x rows, as a viewer of that
	// size arriving does, and returns the session once it is (or after a
	// few seconds, as it is then).
	Resize(ctx context.Context, ref string, cols, rows int) (api.Session, error)
	// Follow opens a read-only stream of the session's output from offset
	// from (wire.FromEnd: from now on), as `termkeep wait` reads it:
	// output and gap frames carrying their offsets, then an exit frame.
	Follow(ctx context.Context, ref string, from int64) (Stream, error)
}

// Stream is an open Follow. Next and Close may be called from different
// goroutines; Close ends a Next in progress.
type Stream interface {
	// Welcome is the server's answer to the stream's hello: the session's
	// oldest retained offset, its end and where this stream starts.
	Welcome() wire.Welcome
	// Next returns the next frame; its payload is valid until the next call.
	Next() (wire.Frame, error)
	Close() error
}

// ClientBackend serves the tools from a termkeep server through its client.
func ClientBackend(c *client.Client) Backend { return clientBackend{c} }

type clientBackend struct{ *client.Client }

func (b clientBackend) Follow(ctx context.Context, ref string, from int64) (Stream, error) {
	s, err := b.Attach(ctx, ref, wire.Hello{Role: wire.RoleWaiter, From: from})
	if err != nil {
		return nil, err
	}
	return clientStream{s}, nil
}

// Resize gives the session a fixed size, as `termkeep resize` does: a
// size set for an agent stays until someone switches the policy back.
func (b clientBackend) Resize(ctx context.Context, ref string, cols, rows int) (api.Session, error) {
	return b.Size(ctx, ref, api.SizeRequest{Cols: uint16(cols), Rows: uint16(rows)})
}

type clientStream struct{ *client.Stream }

func (s clientStream) Welcome() wire.Welcome { return s.Stream.Welcome }
