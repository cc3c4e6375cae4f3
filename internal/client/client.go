// Package client is how the CLI reaches the server: HTTP over the state
// directory's unix socket for requests, and an upgraded connection speaking
// wire frames for streams (attach, wait). It can start a server in the
// background when none is running.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/rawio"
	"termkeep/internal/statedir"
	"termkeep/internal/wire"
)

// Client talks to one server.
type Client struct {
	dir  statedir.Dir
	http *http.Client
	// dialer, when set, opens each connection instead of the state
	// directory's socket (NewDialed).
	dialer func(context.Context) (net.Conn, error)
	// ServiceStart, when set, is how the installed service starts the
	// server of this state directory: EnsureServer asks it first, and
	// starts a server of its own only when the service manager cannot be
	// asked (service.Systemd.Starter).
	ServiceStart func(context.Context) error
	// serviceWait is how long a server the service started has to answer.
	serviceWait time.Duration
}

// New returns a client for the server of state directory dir.
func New(dir statedir.Dir) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dial(ctx, dir) // trust.go
		},
		MaxIdleConns:    4,
		IdleConnTimeout: 30 * time.Second,
	}
	return &Client{dir: dir, http: &http.Client{Transport: tr}}
}

// NewDialed returns a client of the server that dial reaches: a relay to
// another machine's server over ssh. Its errors are returned as they are;
// the client has no state directory.
func NewDialed(dial func(context.Context) (net.Conn, error)) *Client {
	c := &Client{dialer: dial}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			conn, err := dial(ctx)
			if err != nil {
				return nil, dialFailed{err}
			}
			return conn, nil
		},
		MaxIdleConns:    1,
		IdleConnTimeout: 30 * time.Second,
	}
	c.http = &http.Client{Transport: tr}
	return c
}

// dialFailed is a NewDialed client's dial error, handed back unwrapped.
type dialFailed struct{ err error }

func (e dialFailed) Error() string { return e.err.Error() }
func (e dialFailed) Unwrap() error { return e.err }

// Close lets go of the connections the client keeps for its next
// requests.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Conn opens a connection to the server's socket, checked as every
// request's is (trust.go): what a relay copies bytes over.
func (c *Client) Conn(ctx context.Context) (net.Conn, error) {
	if c.dialer != nil {
		return c.dialer(ctx)
	}
	conn, err := dial(ctx, c.dir)
	if err != nil {
		var ue *UntrustedError
		if errors.As(err, &ue) {
			return nil, ue
		}
		return nil, ErrNoServer
	}
	return conn, nil
}

// Dir returns the state directory the client talks to.
func (c *Client) Dir() statedir.Dir { return c.dir }

// Error is an error answer from the server.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

// IsNotFound reports whether err is the server's "no such session".
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// ErrNoServer is returned when no server answers on the socket.
var ErrNoServer = errors.New("client: no termkeep server is running")

// send makes a request and returns the server's 2xx answer; any other
// answer becomes its *Error, and no server on the socket ErrNoServer. The
// caller closes the body.
func (c *Client) send(ctx context.Context, method, path string, body io.Reader, hdr http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://termkeep"+path, body)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *UntrustedError
		if errors.As(err, &ue) {
			return nil, ue
		}
		if df := (dialFailed{}); errors.As(err, &df) {
			return nil, df.err
		}
		if isDialError(err) {
			return nil, ErrNoServer
		}
		return nil, fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, decodeError(resp)
	}
	return resp, nil
}

func (c *Client) do(ctx context.Context, method, path string, body io.Reader, ctype string, out any) error {
	var hdr http.Header
	if ctype != "" {
		hdr = http.Header{"Content-Type": {ctype}}
	}
	resp, err := c.send(ctx, method, path, body, hdr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("client: decode answer to %s %s: %w", method, path, err)
		}
	}
	return nil
}

func decodeError(resp *http.Response) error {
	var e api.Error
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, &e) != nil || e.Error == "" {
		e.Error = fmt.Sprintf("server answered %s", resp.Status)
	}
	return &Error{Status: resp.StatusCode, Message: e.Error}
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (c *Client) doJSON(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	ctype := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body, ctype = bytes.NewReader(b), "application/json"
	}
	return c.do(ctx, method, path, body, ctype, out)
}

// Health asks the server who it is.
func (c *Client) Health(ctx context.Context) (api.Health, error) {
	var h api.Health
	err := c.doJSON(ctx, "GET", "/v1/health", nil, &h)
	return h, err
}

// Create starts a session.
func (c *Client) Create(ctx context.Context, req api.CreateRequest) (api.Session, error) {
	var s api.Session
	err := c.doJSON(ctx, "POST", "/v1/sessions", req, &s)
	return s, err
}

// List returns every session.
func (c *Client) List(ctx context.Context) ([]api.Session, error) {
	var s []api.Session
	err := c.doJSON(ctx, "GET", "/v1/sessions", nil, &s)
	return s, err
}

// Get returns one session by id or name.
func (c *Client) Get(ctx context.Context, ref string) (api.Session, error) {
	var s api.Session
	err := c.doJSON(ctx, "GET", "/v1/sessions/"+url.PathEscape(ref), nil, &s)
	return s, err
}

// GetIn is Get with a name looked up among workspace ws's sessions alone
// (an id is any workspace's).
func (c *Client) GetIn(ctx context.Context, ws, ref string) (api.Session, error) {
	var s api.Session
	err := c.doJSON(ctx, "GET", "/v1/sessions/"+url.PathEscape(ref)+"?workspace="+url.QueryEscape(ws), nil, &s)
	return s, err
}

// Kill ends a session and returns it once it has ended.
func (c *Client) Kill(ctx context.Context, ref string) (api.Session, error) {
	var s api.Session
	err := c.doJSON(ctx, "POST", "/v1/sessions/"+url.PathEscape(ref)+"/kill", nil, &s)
	return s, err
}

// Size gives a session a fixed size, or switches its size policy
// (termkeep resize).
func (c *Client) Size(ctx context.Context, ref string, req api.SizeRequest) (api.Session, error) {
	var s api.Session
	err := c.doJSON(ctx, "POST", "/v1/sessions/"+url.PathEscape(ref)+"/size", req, &s)
	return s, err
}

// Restore starts a new process in an ended or paused session, with env (the
// caller's environment) under the variables the session saved.
func (c *Client) Restore(ctx context.Context, ref string, env []string) (api.Restored, error) {
	var r api.Restored
	err := c.doJSON(ctx, "POST", "/v1/sessions/"+url.PathEscape(ref)+"/restore", api.RestoreRequest{Env: env}, &r)
	return r, err
}

// Workspaces returns every workspace.
func (c *Client) Workspaces(ctx context.Context) ([]api.Workspace, error) {
	var out []api.Workspace
	err := c.doJSON(ctx, "GET", "/v1/workspaces", nil, &out)
	return out, err
}

// CreateWorkspace records a new workspace.
func (c *Client) CreateWorkspace(ctx context.Context, req api.WorkspaceRequest) (api.Workspace, error) {
	var out api.Workspace
	err := c.doJSON(ctx, "POST", "/v1/workspaces", req, &out)
	return out, err
}

// ChangeWorkspace pauses (action "pause") or resumes ("resume") a workspace.
func (c *Client) ChangeWorkspace(ctx context.Context, name, action string) (api.WorkspaceChange, error) {
	var out api.WorkspaceChange
	err := c.doJSON(ctx, "POST", "/v1/workspaces/"+url.PathEscape(name)+"/"+action, nil, &out)
	return out, err
}

// RemoveWorkspace ends a workspace's sessions, deletes their data and the
// workspace.
func (c *Client) RemoveWorkspace(ctx context.Context, name string) error {
	return c.doJSON(ctx, "DELETE", "/v1/workspaces/"+url.PathEscape(name), nil, nil)
}

// Remove deletes an ended session and its data; force kills a running one first.
func (c *Client) Remove(ctx context.Context, ref string, force bool) error {
	q := ""
	if force {
		q = "?force=1"
	}
	return c.doJSON(ctx, "DELETE", "/v1/sessions/"+url.PathEscape(ref)+q, nil, nil)
}

// Input types data into a session.
func (c *Client) Input(ctx context.Context, ref string, data []byte) error {
	return c.do(ctx, "POST", "/v1/sessions/"+url.PathEscape(ref)+"/input", bytes.NewReader(data), "application/octet-stream", nil)
}

// Send types text and named keys into a session, encoded by the server for
// the modes the session's program has set.
func (c *Client) Send(ctx context.Context, ref string, req api.SendRequest) (api.Sent, error) {
	var out api.Sent
	err := c.doJSON(ctx, "POST", "/v1/sessions/"+url.PathEscape(ref)+"/send", req, &out)
	return out, err
}

// Shutdown stops the server; with sessions, every session is ended first.
func (c *Client) Shutdown(ctx context.Context, sessions bool) error {
	return c.doJSON(ctx, "POST", "/v1/shutdown", api.ShutdownRequest{Sessions: sessions}, nil)
}

// Screen returns the session's rendered screen: plain text, or with SGR
// colors (ansi), with up to scrollback lines of history above it.
func (c *Client) Screen(ctx context.Context, ref string, ansi bool, scrollback int) (string, error) {
	q := url.Values{}
	if ansi {
		q.Set("ansi", "1")
	}
	if scrollback > 0 {
		q.Set("scrollback", strconv.Itoa(scrollback))
	}
	resp, err := c.send(ctx, "GET", "/v1/sessions/"+url.PathEscape(ref)+"/screen?"+q.Encode(), nil, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// Output is a stream of logged bytes.
type Output struct {
	io.ReadCloser
	First, End uint64 // the log's oldest retained offset and its end at the request
	trailer    http.Header
}

// Gaps returns the ranges of the output that were never logged (a full
// disk), which the stream skipped. It is known once the stream was read to
// its end.
func (o *Output) Gaps() []api.Gap {
	return api.ParseGaps(o.trailer.Get(api.HeaderGaps))
}

// Output returns the logged bytes from offset from (nil: the oldest
// retained) up to the session's end at the time of the request.
func (c *Client) Output(ctx context.Context, ref string, from *uint64) (*Output, error) {
	path := "/v1/sessions/" + url.PathEscape(ref) + "/output"
	if from != nil {
		path += "?from=" + strconv.FormatUint(*from, 10)
	}
	resp, err := c.send(ctx, "GET", path, nil, nil)
	if err != nil {
		return nil, err
	}
	first, _ := strconv.ParseUint(resp.Header.Get(api.HeaderFirst), 10, 64)
	end, _ := strconv.ParseUint(resp.Header.Get(api.HeaderEnd), 10, 64)
	return &Output{ReadCloser: resp.Body, First: first, End: end, trailer: resp.Trailer}, nil
}

// Stream is an attached wire-protocol connection to a session. Next is for
// one reading goroutine; the sending methods may be called from another.
type Stream struct {
	Welcome wire.Welcome
	conn    net.Conn
	r       *bufio.Reader
	buf     []byte
	mu      sync.Mutex   // guards w
	w       *wire.Writer // frames toward the session
}

// Send writes frames toward the session with fn, safely against the
// stream's own answers to the server's pings.
func (s *Stream) Send(fn func(w *wire.Writer) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(s.w)
}

// Input types data into the session.
func (s *Stream) Input(data []byte) error {
	return s.Send(func(w *wire.Writer) error { return w.Input(data) })
}

// Resize sets the viewer's size.
func (s *Stream) Resize(cols, rows uint16) error {
	return s.Send(func(w *wire.Writer) error { return w.Resize(cols, rows) })
}

// Fit asks the session to take cols x rows (a fit frame, protocol version
// 5); the size policy decides.
func (s *Stream) Fit(cols, rows uint16) error {
	return s.Send(func(w *wire.Writer) error { return w.Fit(cols, rows) })
}

// Ping asks the server for a pong carrying x: a viewer that must know
// its connection still carries bytes (a relay over ssh) pings it.
func (s *Stream) Ping(x uint64) error {
	return s.Send(func(w *wire.Writer) error { return w.Uint64(wire.TypePing, x) })
}

// Attach opens a stream to a session, sends hello and waits for the Welcome.
// An Error frame in place of the Welcome is returned as a *wire.RemoteError.
func (c *Client) Attach(ctx context.Context, ref string, hello wire.Hello) (*Stream, error) {
	conn, err := c.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return AttachOver(ctx, conn, ref, hello)
}

// AttachOver is Attach on conn, a connection to the server already open
// (a relay's); it closes conn when it fails.
func AttachOver(ctx context.Context, conn net.Conn, ref string, hello wire.Hello) (*Stream, error) {
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	fail := func(err error) (*Stream, error) { conn.Close(); return nil, err }
	req, _ := http.NewRequest("GET", "http://termkeep/v1/sessions/"+url.PathEscape(ref)+"/attach", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", api.UpgradeProto)
	if hello.Version == 0 {
		hello.Version = wire.Version
	}
	if hello.Role == "" {
		hello.Role = wire.RoleViewer
	}
	// The hello goes with the request, in one write, rather than a round
	// trip after the upgrade's answer: the server reads frames its HTTP
	// server buffered (handleAttach). An upgrade refused leaves it unread.
	var first bytes.Buffer
	if err := req.Write(&first); err != nil {
		return fail(fmt.Errorf("client: attach: %w", err))
	}
	if err := wire.NewWriter(&first).JSON(wire.TypeHello, hello); err != nil {
		return fail(fmt.Errorf("client: attach: %w", err))
	}
	// Frames are read and written raw (internal/rawio): an ordinary system
	// call after the client was idle wakes the runtime's monitor thread,
	// once per keystroke and once per echo.
	raw := rawio.NewConn(conn)
	if _, err := raw.Write(first.Bytes()); err != nil {
		return fail(fmt.Errorf("client: attach: %w", err))
	}
	br := bufio.NewReaderSize(raw, 256<<10)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return fail(fmt.Errorf("client: attach: %w", err))
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		err := decodeError(resp)
		resp.Body.Close()
		return fail(err)
	}
	s := &Stream{conn: conn, r: br, w: wire.NewWriter(raw)}
	f, err := s.Next()
	if err != nil {
		return fail(fmt.Errorf("client: attach: %w", err))
	}
	switch f.Type {
	case wire.TypeWelcome:
		if err := wire.ParseJSON(f.Payload, &s.Welcome); err != nil {
			return fail(err)
		}
	case wire.TypeError:
		_, msg, _ := wire.ParseError(f.Payload)
		code, _, _ := wire.ParseError(f.Payload)
		return fail(&wire.RemoteError{Code: code, Message: msg})
	default:
		return fail(fmt.Errorf("client: attach: server answered hello with %s", f.Type))
	}
	conn.SetDeadline(time.Time{})
	return s, nil
}

// Next reads the next frame. Its payload is valid until the next call.
// The server's pings are answered here and never returned.
func (s *Stream) Next() (wire.Frame, error) {
	for {
		f, err := wire.ReadFrame(s.r, &s.buf)
		if err != nil {
			return f, err
		}
		if err := wire.Validate(f); err != nil {
			return f, err
		}
		if f.Type == wire.TypeServerPing {
			// An answer that cannot be sent (the server closed the
			// connection after a session's last output and its Exit) is
			// no reason to stop reading: what the server sent before is
			// still here, and a connection that is gone shows in the
			// next read.
			x, _ := wire.ParseUint64(f.Type, f.Payload)
			s.Send(func(w *wire.Writer) error { return w.Uint64(wire.TypeAnswer, x) })
			continue
		}
		return f, nil
	}
}

// Close closes the stream.
func (s *Stream) Close() error { return s.conn.Close() }

// CloseWrite tells the server this side will send nothing more.
func (s *Stream) CloseWrite() error {
	if uc, ok := s.conn.(*net.UnixConn); ok {
		return uc.CloseWrite()
	}
	return nil
}
