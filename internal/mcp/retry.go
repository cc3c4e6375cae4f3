package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"time"

	"termkeep/internal/client"
)

// retryPause is how long a call waits before asking a server that went
// away, or is not ready yet, again.
const retryPause = 200 * time.Millisecond

// errStreamEnded is a followed stream that ended with no exit frame: the
// server went away under it.
var errStreamEnded = errors.New("the server closed the stream")

// transient reports whether err is one a call may outlive by asking again,
// once a server has answered it: the server is gone (being restarted, by
// the CLI's autostart or its supervisor), the connection to it was cut,
// or it answered that it is not ready yet (a screen model still being
// rebuilt from the log after a restart). An answer about the request
// itself (no such session, a bad offset) is not.
func transient(err error) bool {
	var ce *client.Error
	switch {
	case err == nil:
		return false
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.As(err, &ce):
		return ce.Status == http.StatusServiceUnavailable || ce.Status == http.StatusBadGateway
	}
	for _, e := range []error{client.ErrNoServer, errStreamEnded, io.EOF, io.ErrUnexpectedEOF,
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE, syscall.ENOENT} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// errRestarted is the answer of a call whose server went away and did not
// come back within the call's own deadline.
func errRestarted(what string, within time.Duration) error {
	return fmt.Errorf("the termkeep server restarted or stopped during %s and did not answer again within %s; nothing was lost, and calling again is safe", what, within)
}

// reconnect waits until a server answers for session ref again, or ctx
// is done.
func (t *tools) reconnect(ctx context.Context, ref string) error {
	for {
		b, err := t.backend(ctx)
		if err == nil {
			if _, err = b.Get(ctx, ref); err == nil || !transient(err) {
				return err
			}
		}
		select {
		case <-time.After(retryPause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// again calls f with a backend until it succeeds, fails for good, or ctx
// is done: a server that is restarting, or not ready yet, is asked again
// within the caller's deadline. A first "no server" is final: there may
// never be one.
func (t *tools) again(ctx context.Context, f func(Backend) error) error {
	seen := false
	for {
		b, err := t.backend(ctx)
		if err == nil {
			seen = true
			err = f(b)
		}
		if err == nil || !transient(err) || !seen {
			return err
		}
		t.opts.Log.Info("mcp: the server is not ready; asking again", "err", err)
		select {
		case <-time.After(retryPause):
		case <-ctx.Done():
			return err
		}
	}
}
