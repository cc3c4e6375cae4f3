package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/statedir"
)

// Events reads the server's event history after event id after, oldest
// first, calling fn for each event; an error from fn stops the reading and
// is returned. Without follow it returns once it has every stored event.
// With follow it then waits for new events until ctx ends (and returns
// ctx's error), reconnecting from the last id it saw when the stream drops
// (a restarted server), and returning ErrNoServer when no server has
// answered for 10 seconds, unless the server was stopped on purpose
// (statedir.Dir.StoppedOnPurpose): then it waits for one to be started.
func (c *Client) Events(ctx context.Context, after int64, follow bool, fn func(api.Event) error) error {
	var gone time.Time // when the server was first found missing
	for {
		err := c.events(ctx, &after, follow, fn)
		var fnErr *callbackError
		switch {
		case errors.As(err, &fnErr):
			return fnErr.err
		case ctx.Err() != nil:
			return ctx.Err()
		case !follow:
			return err
		}
		var apiErr *Error
		if errors.As(err, &apiErr) {
			return err
		}
		if errors.Is(err, ErrNoServer) {
			if c.dir.StoppedOnPurpose() {
				gone = time.Time{} // shut down: wait for the user's next server
			} else if gone.IsZero() {
				gone = time.Now()
			} else if time.Since(gone) > 10*time.Second {
				return err
			}
		} else {
			gone = time.Time{}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// callbackError carries an error from the caller's fn through the stream
// reader unchanged.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }

// events reads one connection's worth of the stream, advancing *after.
func (c *Client) events(ctx context.Context, after *int64, follow bool, fn func(api.Event) error) error {
	path := "/v1/events?after=" + strconv.FormatInt(*after, 10)
	if !follow {
		path += "&follow=0"
	}
	resp, err := c.send(ctx, "GET", path, nil, http.Header{"Accept": {"text/event-stream"}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return ReadEvents(resp.Body, func(e api.Event) error {
		if e.ID <= *after {
			return nil
		}
		if err := fn(e); err != nil {
			return &callbackError{err}
		}
		*after = e.ID
		return nil
	})
}

// ReadEvents decodes a Server-Sent Events stream of api.Event values (the
// format of GET /v1/events and GET /api/events), calling fn for each. It
// returns nil at the end of the stream and fn's error if fn fails.
func ReadEvents(r io.Reader, fn func(api.Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if data.Len() > 0 {
				var e api.Event
				if err := json.Unmarshal([]byte(data.String()), &e); err != nil {
					return fmt.Errorf("client: bad event %q: %w", data.String(), err)
				}
				data.Reset()
				if err := fn(e); err != nil {
					return err
				}
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		if field == "data" {
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(value)
		}
		// id, event, retry and comments: the data carries all of it.
	}
	return sc.Err()
}

// BrowserURL returns the address to open termkeep in a browser, with the
// owner token, from the files the server writes in the state directory. It
// needs no running server, and fails with a sentence to act on when no
// server has written them.
func BrowserURL(dir statedir.Dir) (string, error) {
	// An address and a token another user put there would send the
	// browser, and what is typed in it, to them.
	if err := dir.Check(); err != nil {
		return "", err
	}
	u, err := os.ReadFile(dir.URL())
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("no termkeep server has opened a browser listener for %s: start one with `termkeep serve` "+
			"(it listens on 127.0.0.1:7420 unless --listen or TERMKEEP_LISTEN says otherwise; its log says why when it cannot)", dir)
	}
	if err != nil {
		return "", fmt.Errorf("read the browser address: %w", err)
	}
	tok, err := os.ReadFile(dir.Token())
	if err != nil {
		return "", fmt.Errorf("read the access token: %w", err)
	}
	// The token goes in the fragment, which the browser sends to no
	// server; the page swaps it for a credential of its own.
	return strings.TrimSpace(string(u)) + "#" + url.Values{"token": {strings.TrimSpace(string(tok))}}.Encode(), nil
}
