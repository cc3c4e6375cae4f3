package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"termkeep/internal/client"
	"termkeep/internal/statedir"
	"termkeep/internal/wire"
)

// follower opens streams to one session and reopens them when a connection
// drops, resuming from the offset it has reached: the viewer's side of
// "every viewer that comes back gets exactly the output it missed".
type follower struct {
	g    *globals
	c    *client.Client
	ref  string
	role string
	// off is the next offset wanted; wire.FromEnd before the first byte when
	// only new output is wanted.
	off        int64
	cols, rows uint16
	scrollback int  // lines of history in a snapshot
	readOnly   bool // watch only
	// detachOthers detaches the session's other terminal viewers, on the
	// first connection only (attach -d).
	detachOthers bool
	// fit takes the session's size on the first connection only (attach,
	// unless --ignore-size or --read-only); ignoreSize never bears on it.
	fit, ignoreSize bool
	name            string // how the other viewers are shown this one
	// screenFirst asks for a snapshot's screen before its history
	// (wire.Hello.ScreenFirst): attach, whose user waits for the screen.
	screenFirst bool
	// laneToken names the current connection's lanes; claim is an earlier
	// connection's token whose lane's end the next connection asks for
	// (wire/laneclaim.go): attach only.
	laneToken, claim uint64
	// unchecked: c was made without asking whether a server answers (a
	// round trip before attach's first draw); the first connection that
	// finds none starts one (globals.connect) instead of counting as lost.
	unchecked bool
	// onStopped, when set, is called once each time open finds that the
	// server it lost was stopped on purpose (termkeep shutdown, SIGTERM):
	// open then waits for a server to be started, and starts none itself.
	onStopped func()
}

// uncheckedClient returns a client of the state directory without asking
// whether a server answers: the first stream opened says so.
func (g *globals) uncheckedClient() (*client.Client, error) {
	dir, err := statedir.Resolve(g.stateDir)
	if err != nil {
		return nil, err
	}
	return client.New(dir), nil
}

// open returns a stream, retrying while the server is unreachable (starting
// it again unless --no-autostart, or unless it was stopped on purpose:
// then only a command the user runs starts one). Errors the server states
// (no such session, a refused request) are returned at once. notify, when
// set, is called once when a retry begins.
func (f *follower) open(ctx context.Context, notify func()) (*client.Stream, error) {
	delay := 100 * time.Millisecond
	told, toldStopped := false, false
	for {
		s, err := f.c.Attach(ctx, f.ref, wire.Hello{
			Role: f.role, From: f.off, Cols: f.cols, Rows: f.rows, Scrollback: f.scrollback, ReadOnly: f.readOnly,
			DetachOthers: f.detachOthers, Fit: f.fit, IgnoreSize: f.ignoreSize, Name: f.name,
			ScreenFirst: f.screenFirst, LaneToken: f.laneToken, Claim: f.claim,
		})
		if err == nil {
			f.detachOthers, f.fit, f.unchecked = false, false, false
			return s, nil
		}
		if f.unchecked && errors.Is(err, client.ErrNoServer) {
			f.unchecked = false
			c, err := f.g.connect(ctx) // starts a server, or says why not
			if err != nil {
				return nil, err
			}
			f.c = c
			continue
		}
		var ce *client.Error
		var re *wire.RemoteError
		if errors.As(err, &ce) || errors.As(err, &re) || ctx.Err() != nil {
			return nil, apiErr(err)
		}
		if !told && notify != nil {
			notify()
			told = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 2*time.Second)
		if f.g.noAutostart {
			continue
		}
		if f.c.Dir().StoppedOnPurpose() {
			// Shut down on purpose: a client in the background does not
			// bring it back, as a tmux client would not; it reconnects
			// when the user starts one (any command but this one).
			if !toldStopped && f.onStopped != nil {
				f.onStopped()
			}
			toldStopped = true
			continue
		}
		toldStopped = false
		if c, err := f.g.connect(ctx); err == nil {
			f.c = c
		}
	}
}

// dial opens a stream for hello h as open does, retrying while no
// server answers: the opener of package attach, which decides the
// offsets and first-connection flags itself.
func (f *follower) dial(ctx context.Context, h wire.Hello, notify func(why string)) (*client.Stream, error) {
	f.role, f.off, f.cols, f.rows, f.scrollback = h.Role, h.From, h.Cols, h.Rows, h.Scrollback
	f.readOnly, f.detachOthers, f.fit, f.ignoreSize = h.ReadOnly, h.DetachOthers, h.Fit, h.IgnoreSize
	f.name, f.screenFirst, f.laneToken, f.claim = h.Name, h.ScreenFirst, h.LaneToken, h.Claim
	f.onStopped = func() { notify(stoppedWhy) }
	return f.open(ctx, func() { notify("connection lost; reconnecting (Ctrl-\\ detaches)") })
}

// stoppedWhy is what a client left by `termkeep shutdown` says: it waits
// for a server the user starts, and starts none itself.
const stoppedWhy = "the server was shut down; waiting for one to be started (any termkeep command, such as termkeep ls, starts it)"

// stoppedNote says stoppedWhy on standard error (wait, run).
func stoppedNote() { fmt.Fprintln(os.Stderr, "termkeep: "+stoppedWhy) }

// advance records output received at off.
func (f *follower) advance(off uint64, n int) {
	f.off = int64(off) + int64(n)
}

// follow reads the session's stream, reopening it from f.off after a drop,
// and hands each frame to fn until fn says it is done (with the exit code
// and error to return), the server sends an Error frame, or ctx ends.
func (f *follower) follow(ctx context.Context, fn func(fr wire.Frame) (done bool, code int, err error)) (int, error) {
	for {
		s, err := f.open(ctx, nil)
		if err != nil {
			return 0, err
		}
		stop := context.AfterFunc(ctx, func() { s.Close() })
		for {
			fr, err := s.Next()
			if err != nil {
				break // connection dropped: reopen from f.off
			}
			var done bool
			var code int
			if fr.Type == wire.TypeError {
				_, msg, _ := wire.ParseError(fr.Payload)
				done, err = true, errors.New(msg)
			} else {
				done, code, err = fn(fr)
			}
			if done {
				stop()
				s.Close()
				return code, err
			}
		}
		stop()
		s.Close()
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
	}
}
