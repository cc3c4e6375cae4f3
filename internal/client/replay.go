package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	"termkeep/internal/api"
)

// Timeline asks for a session's replay timeline.
func (c *Client) Timeline(ctx context.Context, ref string) (api.ReplayTimeline, error) {
	var tl api.ReplayTimeline
	err := c.doJSON(ctx, "GET", "/v1/sessions/"+url.PathEscape(ref)+"/replay", nil, &tl)
	return tl, err
}

// ScreenAt is a session's screen at a moment of its past.
type ScreenAt struct {
	Body       []byte    // in the format asked for
	Offset     uint64    // the screen reflects every byte below it
	Time       time.Time // the moment
	Cols, Rows int
}

// ReplayScreen asks for a session's screen at a moment: at is an offset,
// an RFC 3339 time or "t" and Unix ms ("" = the end of its output);
// format is snapshot, text or ansi; scrollback the lines of history above
// the screen.
func (c *Client) ReplayScreen(ctx context.Context, ref, at, format string, scrollback int) (ScreenAt, error) {
	q := url.Values{"format": {format}, "scrollback": {strconv.Itoa(scrollback)}}
	if at != "" {
		q.Set("at", at)
	}
	resp, err := c.send(ctx, "GET", "/v1/sessions/"+url.PathEscape(ref)+"/replay/screen?"+q.Encode(), nil, nil)
	if err != nil {
		return ScreenAt{}, err
	}
	defer resp.Body.Close()
	var s ScreenAt
	if s.Body, err = io.ReadAll(resp.Body); err != nil {
		return ScreenAt{}, fmt.Errorf("client: read the replayed screen: %w", err)
	}
	s.Offset, _ = strconv.ParseUint(resp.Header.Get(api.HeaderOffset), 10, 64)
	if ms, err := strconv.ParseInt(resp.Header.Get(api.HeaderTime), 10, 64); err == nil {
		s.Time = time.UnixMilli(ms)
	}
	fmt.Sscanf(resp.Header.Get(api.HeaderSize), "%dx%d", &s.Cols, &s.Rows)
	return s, nil
}

// ReplayOutput asks for a session's output from offset from with its
// times, at most limit data bytes of it (0: the server's default), calling
// fn with each line but the last; it returns where to go on, and whether
// that is the end of the output for now.
func (c *Client) ReplayOutput(ctx context.Context, ref string, from uint64, limit int, fn func(api.ReplayStep) error) (next uint64, done bool, err error) {
	q := url.Values{"from": {strconv.FormatUint(from, 10)}}
	if limit > 0 {
		q.Set("max", strconv.Itoa(limit))
	}
	resp, err := c.send(ctx, "GET", "/v1/sessions/"+url.PathEscape(ref)+"/replay/output?"+q.Encode(), nil, nil)
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 32<<20) // a chunk of up to 1 MiB, in base64
	for sc.Scan() {
		var st api.ReplayStep
		if err := json.Unmarshal(sc.Bytes(), &st); err != nil {
			return 0, false, fmt.Errorf("client: decode replay output: %w", err)
		}
		if st.Next != nil {
			return *st.Next, st.Done != nil && *st.Done, nil
		}
		if err := fn(st); err != nil {
			return 0, false, err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, false, fmt.Errorf("client: read replay output: %w", err)
	}
	if msg := resp.Trailer.Get(api.HeaderError); msg != "" {
		return 0, false, errors.New(msg)
	}
	return 0, false, errors.New("client: replay output ended without saying where to go on")
}
