package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxMessage bounds one incoming message (one line); a longer line is
// answered with an error and skipped.
const maxMessage = 16 << 20

// drainGrace is how long requests still being answered when the input
// ends may take to finish: a client that writes its requests and closes
// its end (a script, a pipe) still gets its answers, one that goes away
// does not keep the server for long.
const drainGrace = 5 * time.Second

// lineTransport is the stdio transport of the MCP specification:
// JSON-RPC messages, one per line (no embedded newlines), read from r and
// written to w. It differs from the SDK's own stdio transport in what it
// does with a line that is not a message: it answers it (-32700 for JSON
// that does not parse, -32600 for JSON that is not a request) and goes on
// reading, where the SDK's transport ends the connection.
type lineTransport struct {
	r   io.Reader
	w   io.Writer
	log *slog.Logger
}

var _ sdk.Transport = (*lineTransport)(nil)

func (t *lineTransport) Connect(context.Context) (sdk.Connection, error) {
	c := &lineConn{w: t.w, log: t.log, lines: make(chan lineOrErr), closed: make(chan struct{}),
		pending: make(map[jsonrpc.ID]struct{}), answered: make(chan struct{}, 1)}
	go c.readLines(t.r)
	return c, nil
}

type lineOrErr struct {
	line []byte
	err  error
}

// lineConn is one connection over a lineTransport. Read is called by one
// goroutine (the SDK's reader); Write and Close by any.
type lineConn struct {
	log *slog.Logger

	wmu sync.Mutex // guards w: one message per write, never interleaved
	w   io.Writer

	lines     chan lineOrErr
	closed    chan struct{}
	closeOnce sync.Once

	pmu      sync.Mutex // guards pending
	pending  map[jsonrpc.ID]struct{}
	answered chan struct{} // a token when a pending request is answered
}

// readLines feeds c.lines until r fails or c is closed. A goroutine blocked
// in r.Read after Close stays blocked until r returns: stdin cannot be
// interrupted portably, and the process is ending anyway.
func (c *lineConn) readLines(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 || err != nil {
			select {
			case c.lines <- lineOrErr{line, err}:
			case <-c.closed:
				return
			}
		}
		if err != nil && !errors.Is(err, errTooLong) {
			return
		}
	}
}

var errTooLong = fmt.Errorf("message longer than %d MiB", maxMessage>>20)

// idPrefix is how much of a line over the limit is kept to find the
// request's id in: clients write "id" before "params".
const idPrefix = 4 << 10

// readLine returns the next line without its end ("\n" or "\r\n"). A line
// longer than maxMessage is skipped to its end and reported as errTooLong,
// with its first idPrefix bytes as the line.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxMessage+2 {
				tooLong = true
				line = append(line, chunk[:min(len(chunk), max(0, idPrefix-len(line)))]...)
				line = line[:min(len(line), idPrefix)]
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			if err == nil || err == io.EOF {
				err = errTooLong // an unterminated last line: the next read says EOF
			}
			return line, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if err == io.EOF && len(line) > 0 {
			err = nil // the last line, unterminated: the next call says EOF
		}
		return line, err
	}
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var in lineOrErr
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case in = <-c.lines:
		}
		if errors.Is(in.err, errTooLong) {
			c.reject(idFromPrefix(in.line), jsonrpc.CodeInvalidRequest, in.err.Error())
			continue
		}
		if in.err != nil {
			if in.err == io.EOF {
				c.drain(ctx)
			}
			return nil, in.err
		}
		line := bytes.TrimSpace(in.line)
		if len(line) == 0 {
			continue
		}
		if id, why := badID(line); why != "" {
			c.reject(id, jsonrpc.CodeInvalidRequest, "invalid request: "+why)
			continue
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if resp, ok := msg.(*jsonrpc.Response); ok && err == nil && resp.Result == nil && resp.Error == nil {
			// Neither a method nor a result: a request missing its method,
			// which the SDK would take for a response to drop unanswered.
			err = errors.New("a request needs a method")
		}
		if err == nil {
			if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
				c.pmu.Lock()
				c.pending[req.ID] = struct{}{}
				c.pmu.Unlock()
			}
			return msg, nil
		}
		c.rejectLine(line, err)
	}
}

// rejectLine answers a line that is not a JSON-RPC message, as JSON-RPC
// 2.0 says: a parse error when it is not JSON, an invalid request (with
// its id when one can be read) when it is JSON of the wrong shape.
func (c *lineConn) rejectLine(line []byte, err error) {
	if !json.Valid(line) {
		c.reject(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
		return
	}
	if line[0] == '[' {
		c.reject(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported (protocol revision "+ProtocolVersion+")")
		return
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	var id any
	if json.Unmarshal(line, &probe) == nil && len(probe.ID) > 0 {
		var v any
		if json.Unmarshal(probe.ID, &v) == nil {
			switch v.(type) {
			case string, float64:
				id = v
			}
		}
	}
	c.reject(id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
}

// reject writes an error response with id (nil: null).
func (c *lineConn) reject(id any, code int64, msg string) {
	c.log.Warn("mcp: rejected a message", "code", code, "err", msg)
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   any    `json:"error"`
	}{"2.0", id, struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	if err == nil {
		c.writeLine(b)
	}
}

// drain waits, at most drainGrace, until every request read has been
// answered.
func (c *lineConn) drain(ctx context.Context) {
	deadline := time.NewTimer(drainGrace)
	defer deadline.Stop()
	for {
		c.pmu.Lock()
		n := len(c.pending)
		c.pmu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.answered:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		case <-c.closed:
			return
		}
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error != nil {
		resp.Error = withCode(resp.Error)
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	err = c.writeLine(b)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.pmu.Lock()
		delete(c.pending, resp.ID)
		c.pmu.Unlock()
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return err
}

func (c *lineConn) writeLine(b []byte) error {
	select {
	case <-c.closed:
		return sdk.ErrConnectionClosed
	default:
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(b, '\n'))
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *lineConn) SessionID() string { return "" }

// badID reads the "id" of a message: null, or a number that is not an
// integer, which MCP forbids (its ids are strings or integers), is
// refused with why, and the id as it can be answered (nil: null). The
// SDK would answer the first never and the second as an integer.
func badID(line []byte) (id any, why string) {
	var probe map[string]json.RawMessage
	if line[0] != '{' || json.Unmarshal(line, &probe) != nil {
		return nil, ""
	}
	raw, ok := probe["id"]
	if !ok {
		return nil, ""
	}
	raw = bytes.TrimSpace(raw)
	switch {
	case bytes.Equal(raw, []byte("null")):
		return nil, "an id is a string or an integer, not null"
	case len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') && bytes.ContainsAny(raw, ".eE"):
		var f float64
		if json.Unmarshal(raw, &f) == nil && f != float64(int64(f)) {
			return f, "an id is a string or an integer, not " + string(raw)
		}
	}
	return nil, ""
}

// withCode gives an error the SDK answers without a JSON-RPC code (code
// 0, which no client can act on) the code JSON-RPC has for it: a request
// before the session's initialize is an invalid request; anything else
// an internal error.
func withCode(err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) && je.Code != 0 {
		return err
	}
	code := int64(jsonrpc.CodeInternalError)
	if strings.Contains(err.Error(), "invalid during session initialization") {
		code = jsonrpc.CodeInvalidRequest
	}
	msg := err.Error()
	if je != nil {
		msg = je.Message
	}
	return &jsonrpc.Error{Code: code, Message: msg}
}

// idFromPrefix reads the id of a JSON-RPC request from the start of its
// line, which may be cut anywhere: a top-level "id" member whose value is
// a string or a number, complete before the cut. Anything else (no id yet,
// an id of another type, not an object) is nil: the answer's id is then
// null, as JSON-RPC says when the id cannot be read.
func idFromPrefix(p []byte) any {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key != "id" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		tok, err := dec.Token()
		if err != nil || !dec.More() && dec.InputOffset() >= int64(len(p)) {
			// A number at the very end may be cut short ("12" of "123").
			if _, isNum := tok.(json.Number); isNum || err != nil {
				return nil
			}
		}
		switch v := tok.(type) {
		case string:
			return v
		case json.Number:
			f, err := v.Float64()
			if err != nil {
				return nil
			}
			return f
		}
		return nil
	}
	return nil
}
