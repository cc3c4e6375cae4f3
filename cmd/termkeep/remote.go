package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"termkeep/internal/attach"
	"termkeep/internal/client"
	"termkeep/internal/remote"
	"termkeep/internal/session/liveness"
	"termkeep/internal/wire"
)

// The remote forms of attach, ls and new (HOST:SESSION, HOST:) reach a
// termkeep on another machine through the user's ssh (internal/remote).

// remoteTarget reads a SESSION or HOST:SESSION argument: isRemote says
// which; a malformed one is a usage error.
func remoteTarget(arg string) (t remote.Target, isRemote bool, err error) {
	t, err = remote.Parse(arg)
	if err != nil {
		return t, false, usageErr("%v", err)
	}
	return t, t.Remote(), nil
}

// remoteKeepalive is how attach over ssh finds a link that drops
// everything without a word: a ping a second, and a connection silent for
// four seconds is taken for lost.
var remoteKeepalive = liveness.Config{Interval: time.Second, Timeout: 3 * time.Second}

func dialerFor(t remote.Target) *remote.Dialer {
	return remote.NewDialer(t, os.Getenv, wire.Version, wire.MinVersion)
}

// remoteErr gives a remote failure its own exit status.
func remoteErr(err error) error {
	var re *remote.Error
	if errors.As(err, &re) {
		return &exitErr{code: re.Code, msg: re.Msg}
	}
	return err
}

// remoteClient returns a client of the server on t's host, through ssh
// (one connection, which its requests share); a failure to reach it is
// one sentence.
func remoteClient(ctx context.Context, t remote.Target) (*client.Client, error) {
	d := dialerFor(t)
	first, err := d.Relay(ctx, remote.DialFirst)
	if err != nil {
		return nil, remoteErr(err)
	}
	var mu sync.Mutex
	return client.NewDialed(func(ctx context.Context) (net.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		if first != nil {
			c := first
			first = nil
			return c, nil
		}
		c, err := d.Relay(ctx, remote.DialFirst)
		if err != nil {
			return nil, remoteErr(err)
		}
		return c, nil
	}), nil
}

// remoteOpener opens attach's connections to a session on another
// machine: the first over the ssh connection made before the terminal was
// taken (ssh may ask for a password then), the others by running ssh
// again in batch mode, one at a time, paced by remote.Redial while the
// network, the host or its termkeep cannot answer.
type remoteOpener struct {
	d     *remote.Dialer
	ref   string // the session on the remote machine
	first net.Conn
}

// dialWait bounds one reconnect's ssh and hello.
const dialWait = 20 * time.Second

func (o *remoteOpener) open(ctx context.Context, h wire.Hello, notify func(why string)) (*client.Stream, error) {
	redial := remote.NewRedial(250*time.Millisecond, 5*time.Second)
	said := ""
	for {
		began := time.Now()
		s, err := o.try(ctx, h)
		if err == nil {
			return s, nil
		}
		var re *remote.Error
		var ce *client.Error
		var we *wire.RemoteError
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.As(err, &ce) || errors.As(err, &we):
			return nil, apiErr(err) // the server's answer: no such session, ...
		case errors.As(err, &re) && !re.Transient():
			return nil, remoteErr(err)
		}
		if re != nil && re.Kind == remote.KindAuth {
			return nil, &attach.NeedsTerminal{Why: fmt.Sprintf("ssh to %s needs a password or a passphrase to reconnect", o.d.Name), Ask: o.ask}
		}
		why := fmt.Sprintf("connection to %s lost; reconnecting (Ctrl-\\ detaches)", o.d.Name)
		if re != nil {
			why = re.Msg + "; trying again (Ctrl-\\ detaches)"
		}
		if why != said {
			notify(why)
			said = why
		}
		wait := time.NewTimer(redial.Failed(began, time.Now()))
		select {
		case <-ctx.Done():
			wait.Stop()
			return nil, ctx.Err()
		case <-wait.C:
		}
	}
}

// ask runs ssh with the terminal, which may ask for a password; the
// connection is the next attempt's.
func (o *remoteOpener) ask(ctx context.Context) error {
	c, err := o.d.Relay(ctx, remote.DialAsking)
	if err != nil {
		return err
	}
	o.first = c
	return nil
}

// try opens one connection and says hello on it.
func (o *remoteOpener) try(ctx context.Context, h wire.Hello) (*client.Stream, error) {
	dctx, cancel := context.WithTimeout(ctx, dialWait)
	defer cancel()
	conn := o.first
	o.first = nil
	if conn == nil {
		c, err := o.d.Relay(dctx, remote.DialAgain)
		if err != nil {
			return nil, err
		}
		conn = c
	}
	return client.AttachOver(dctx, conn, o.ref, h)
}
