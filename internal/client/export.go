package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strconv"

	"termkeep/internal/api"
)

// ExportRequest says what to export of a session's log.
type ExportRequest struct {
	Format   string   // cast, txt, html or raw
	From, To string   // an offset, an RFC 3339 time or a duration before now; "" = the retained start, the end
	Redact   *bool    // nil: the format's default
	Patterns []string // more secrets to hide (Go regexp syntax)
	// MaxLines bounds the history txt and html keep (0: no limit); nil:
	// the server's default (export.DefaultMaxLines).
	MaxLines *int
	// Progress, when set, is called with the server's progress (bytes of
	// log done, of total) while it works before its first byte.
	Progress func(done, total uint64)
}

// Export is an export's body, streaming.
type Export struct {
	io.ReadCloser
	From, To uint64 // the range it covers
	// Done and Total are the server's progress where the body starts: a
	// txt or html export is done, a cast or raw one has only begun.
	Done, Total uint64
	trailer     http.Header
}

// Export asks for an export of a session's log.
func (c *Client) Export(ctx context.Context, ref string, req ExportRequest) (*Export, error) {
	q := url.Values{"format": {req.Format}}
	if req.From != "" {
		q.Set("from", req.From)
	}
	if req.To != "" {
		q.Set("to", req.To)
	}
	if req.Redact != nil {
		q.Set("redact", strconv.FormatBool(*req.Redact))
	}
	q["pattern"] = req.Patterns
	if req.MaxLines != nil {
		q.Set("max_lines", strconv.Itoa(*req.MaxLines))
	}
	if req.Progress != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
				if done, total, ok := api.ParseProgress(h.Get(api.HeaderProgress)); ok && code == http.StatusProcessing {
					req.Progress(done, total)
				}
				return nil
			},
		})
	}
	resp, err := c.send(ctx, "GET", "/v1/sessions/"+url.PathEscape(ref)+"/export?"+q.Encode(), nil, nil)
	if err != nil {
		return nil, err
	}
	e := &Export{ReadCloser: resp.Body, trailer: resp.Trailer}
	e.From, _ = strconv.ParseUint(resp.Header.Get(api.HeaderExportFrom), 10, 64)
	e.To, _ = strconv.ParseUint(resp.Header.Get(api.HeaderExportTo), 10, 64)
	e.Done, e.Total, _ = api.ParseProgress(resp.Header.Get(api.HeaderProgress))
	return e, nil
}

// Gaps returns the ranges of the log the export could not read (at most
// the first 100), once the body was read to its end.
func (e *Export) Gaps() []api.Gap { return api.ParseGaps(e.trailer.Get(api.HeaderGaps)) }

// LinesLeftOut returns how many of the oldest lines of history a txt or
// html export left out, over its limit, once the body was read to its end.
func (e *Export) LinesLeftOut() int {
	n, _ := strconv.Atoi(e.trailer.Get(api.HeaderLinesLeftOut))
	return n
}

// Err returns why the export was cut short, once the body was read to its
// end; nil when it was not.
func (e *Export) Err() error {
	if msg := e.trailer.Get(api.HeaderError); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// GrepOptions are a grep's switches.
type GrepOptions struct {
	IgnoreCase bool
	Literal    bool // the pattern is plain text, not a regexp
	Limit      int  // stop after this many hits (0: all of them)
}

// Grep searches a session's whole retained log for lines matching pattern
// (Go regexp syntax, or plain text with opt.Literal), calling fn with each
// hit as the server finds it.
func (c *Client) Grep(ctx context.Context, ref, pattern string, opt GrepOptions, fn func(api.GrepHit) error) error {
	q := url.Values{"pattern": {pattern}}
	if opt.IgnoreCase {
		q.Set("i", "1")
	}
	if opt.Literal {
		q.Set("literal", "1")
	}
	if opt.Limit > 0 {
		q.Set("limit", strconv.Itoa(opt.Limit))
	}
	resp, err := c.send(ctx, "GET", "/v1/sessions/"+url.PathEscape(ref)+"/grep?"+q.Encode(), nil, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var hit api.GrepHit
		if err := json.Unmarshal(sc.Bytes(), &hit); err != nil {
			return fmt.Errorf("client: decode grep hit: %w", err)
		}
		if err := fn(hit); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("client: read grep hits: %w", err)
	}
	if msg := resp.Trailer.Get(api.HeaderError); msg != "" {
		return errors.New(msg)
	}
	return nil
}
