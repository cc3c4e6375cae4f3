package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/statedir"
	"termkeep/internal/wire"
)

// rawRequest sends req on a new connection to the listener and returns the
// connection and the answer's status.
func rawRequest(t *testing.T, c net.Conn, req string) int {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("answer to %q: %v", req, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// closedWithin reports whether the server closes c within d.
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return err == nil || !(errAs(err, &ne) && ne.Timeout())
}

func errAs(err error, ne *net.Error) bool {
	v, ok := err.(net.Error)
	if ok {
		*ne = v
	}
	return ok
}

// Every answer to a request that did not pass the guard closes its
// connection: a /healthz, a 401, a 401 that left a body unread (drained
// for at most a second), a 403 for a foreign Host. A request with the
// token keeps it alive for the next one. The page is served to anyone,
// and closes its connection too.
func TestListenerClosesUnauthenticated(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0")
	hs := ts.srv.gw.http
	if hs.ReadHeaderTimeout <= 0 || hs.IdleTimeout <= 0 || hs.ConnContext == nil {
		t.Fatalf("browser listener: header timeout %s, idle timeout %s; want both set", hs.ReadHeaderTimeout, hs.IdleTimeout)
	}
	host := strings.TrimPrefix(ts.base, "http://")
	for _, tc := range []struct {
		name, req string
		status    int
	}{
		{"healthz", "GET /healthz HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 200},
		{"readyz", "GET /readyz HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 0}, // 200 or 503
		{"no token", "GET /api/sessions HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 401},
		{"wrong token", "GET /api/sessions HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer nope\r\n\r\n", 401},
		{"body left", "POST /api/sessions HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 100000\r\n\r\n{\"na", 401},
		{"foreign host", "GET /api/sessions HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer " + ts.token + "\r\n\r\n", 403},
		{"page", "GET / HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 200}, // public, and acts as no one
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if got := rawRequest(t, c, tc.req); got != tc.status && tc.status != 0 {
				t.Fatalf("status %d, want %d", got, tc.status)
			}
			if !closedWithin(c, 10*time.Second) {
				t.Error("the connection stays open after the answer")
			}
		})
	}

	// A silent connection waits in the gate; one whose request passed
	// leaves it.
	gl := ts.srv.gw.ln.(*gateListener)
	waiting := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			gl.mu.Lock()
			n := gl.gate.unauthenticated()
			gl.mu.Unlock()
			if n == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d connections wait in the gate, want %d", n, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waiting(0)
	silent, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	waiting(1)
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waiting(2)
	req := "GET /api/sessions HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + ts.token + "\r\n\r\n"
	br := bufio.NewReader(c)
	for i := 0; i < 3; i++ {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, req)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 || resp.Close {
			t.Fatalf("request %d with the token on one connection: %v %v", i, resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		waiting(1)
	}
}

// newShortServer is a server whose browser listener has timeouts of a few
// hundred milliseconds, with safe holders (fuzz_test.go) and a live
// session, "live", whose child is cat.
func newShortServer(t *testing.T, to listenerTimeouts) *testServer {
	t.Helper()
	d, err := os.MkdirTemp("", "tkt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	dir := statedir.Dir(d)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	srv, err := New(context.Background(), Config{
		StateDir: dir, HolderArgv: []string{self, safeHolderArg}, Listen: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(logs, nil)), KillGrace: time.Second,
		PingInterval: 100 * time.Millisecond, PongTimeout: 5 * time.Second, timeouts: &to,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, dir: dir, srv: srv, logs: logs, done: make(chan error, 1)}
	go func() { ts.done <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		srv.Shutdown(true)
		select {
		case <-ts.done:
		case <-time.After(20 * time.Second):
			t.Error("server did not stop")
		}
	})
	b, err := os.ReadFile(dir.URL())
	if err != nil {
		t.Fatal(err)
	}
	ts.base = strings.TrimSuffix(strings.TrimSpace(string(b)), "/")
	tok, _ := os.ReadFile(dir.Token())
	ts.token = strings.TrimSpace(string(tok))
	rec := httptest.NewRecorder()
	srv.http.Handler.ServeHTTP(rec, httptest.NewRequest("POST", "http://termkeep/v1/sessions",
		strings.NewReader(`{"name":"live","cwd":"/","command":["__cat"]}`)))
	if rec.Code != http.StatusCreated {
		t.Fatalf("create the live session: %d %s", rec.Code, rec.Body.String())
	}
	return ts
}

// A WebSocket viewer and an event stream idle for many times every
// timeout of the listener are not cut: the viewer answers the server's
// pings and its typing still echoes, and the stream still delivers the
// next event.
func TestListenerStreamsOutliveTimeouts(t *testing.T) {
	short := 300 * time.Millisecond
	ts := newShortServer(t, listenerTimeouts{header: short, body: short, idle: short, write: short, drain: short})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.base, "http")+"/ws/sessions/live?from=-1",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + ts.token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	send := func(fn func(w *wire.Writer) error) error {
		var b bytes.Buffer
		fn(wire.NewWriter(&b))
		return c.Write(ctx, websocket.MessageBinary, b.Bytes())
	}
	output := make(chan []byte, 256)
	readErr := make(chan error, 1)
	var pings atomic.Int64
	go func() {
		var buf []byte
		for {
			_, msg, err := c.Read(ctx)
			if err != nil {
				readErr <- err
				close(output)
				return
			}
			f, err := wire.ReadFrame(bytes.NewReader(msg), &buf)
			if err != nil {
				continue
			}
			switch f.Type {
			case wire.TypeServerPing:
				pings.Add(1)
				x, _ := wire.ParseUint64(f.Type, f.Payload)
				send(func(w *wire.Writer) error { return w.Uint64(wire.TypeAnswer, x) })
			case wire.TypeOutput:
				_, data, _ := wire.ParseOutput(f.Payload)
				output <- append([]byte(nil), data...)
			}
		}
	}()

	events, err := http.NewRequestWithContext(ctx, "GET", ts.base+"/api/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	events.Header.Set("Authorization", "Bearer "+ts.token)
	resp, err := http.DefaultClient.Do(events)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("events: %v %v", resp, err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()

	time.Sleep(10 * short) // idle, far past every timeout
	select {
	case err := <-readErr:
		t.Fatalf("the viewer was cut while idle: %v", err)
	default:
	}
	if err := send(func(w *wire.Writer) error { return w.Input([]byte("still-here\n")) }); err != nil {
		t.Fatalf("type after the idle time: %v", err)
	}
	var got []byte
	for !bytes.Contains(got, []byte("still-here")) {
		select {
		case b, ok := <-output:
			if !ok {
				t.Fatalf("the viewer ended before the echo (%q): %v", got, <-readErr)
			}
			got = append(got, b...)
		case <-ctx.Done():
			t.Fatalf("no echo after the idle time: %q", got)
		}
	}

	rename, _ := http.NewRequest("PATCH", ts.base+"/api/sessions/live", strings.NewReader(`{"name":"renamed"}`))
	rename.Header.Set("Authorization", "Bearer "+ts.token)
	if r, err := http.DefaultClient.Do(rename); err != nil || r.StatusCode != 200 {
		t.Fatalf("rename: %v %v", r, err)
	} else {
		r.Body.Close()
	}
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the event stream ended while idle")
			}
			if strings.Contains(l, "session.renamed") {
				return
			}
		case <-ctx.Done():
			t.Fatal(fmt.Sprint("no event after the idle time; pings answered: ", pings.Load()))
		}
	}
}

// The guard finds a request's connection through TLS too, so that an
// HTTPS browser's connection leaves the gate when its request passes.
func TestConnContextThroughTLS(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	l := newGateListener(nil, slog.New(slog.DiscardHandler), nil)
	gc := &gatedConn{Conn: a, l: l, id: 1}
	for _, c := range []net.Conn{gc, tls.Server(gc, &tls.Config{})} {
		if got, _ := connContext(context.Background(), c).Value(gatedConnKey{}).(*gatedConn); got != gc {
			t.Errorf("%T: connection in the context %v, want the gated one", c, got)
		}
	}
	if got := connContext(context.Background(), b).Value(gatedConnKey{}); got != nil {
		t.Errorf("a connection the listener did not accept: %v in the context", got)
	}
}
