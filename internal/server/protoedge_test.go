package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/wire"
)

// An absolute-form request line makes Go take the host from the line and
// drop the Host header unseen, so the Host check would pass whatever the
// header said: such requests are refused, whatever they name.
func TestAbsoluteFormRefused(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0")
	u, _ := url.Parse(ts.base)
	for _, c := range []struct{ target, host string }{
		{"http://" + u.Host + "/api/sessions", "evil.example"},
		{"http://" + u.Host + "/api/sessions", u.Host},
		{"http://evil.example/api/sessions", u.Host},
	} {
		conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", c.target, c.host, ts.token)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("GET %s (Host %s): %v", c.target, c.host, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "absolute") {
			t.Errorf("GET %s (Host %s): %d %s, want 400", c.target, c.host, resp.StatusCode, body)
		}
	}
	// The ordinary form still passes.
	if code, _ := rawGet(t, ts.base, "/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz: %d", code)
	}
}

// An env entry without '=' is no variable: the create is refused with 400
// and a sentence, not started with a broken environment.
func TestCreateEnvWithoutEquals(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0")
	for _, field := range []string{"env", "set_env"} {
		body := map[string]any{"command": []string{"cat"}, "cwd": "/", field: []string{"PATH=/bin", "NOEQUALS"}}
		expectJSONError(t, ts.do("POST", "/api/sessions", "bearer", body), 400, "KEY=VALUE")
	}
}

// A WebSocket message holding two wire frames (or a frame and a piece of
// the next) breaks the one-frame-per-message rule: the connection is
// closed and none of its bytes reach the host.
func TestWSConnOneFramePerMessage(t *testing.T) {
	one := func(typ wire.Type, p string) []byte {
		var b strings.Builder
		w := wire.NewWriter(&b)
		if err := w.Frame(typ, []byte(p)); err != nil {
			t.Fatal(err)
		}
		return []byte(b.String())
	}
	good := one(wire.TypeInput, "echo ok\r")
	for _, c := range []struct {
		name string
		msg  []byte
	}{
		{"two frames", append(one(wire.TypeInput, "x"), one(wire.TypeInput, "touch /tmp/pwned\r")...)},
		{"a frame and a half", append(one(wire.TypeInput, "x"), 0x01, 0, 0)},
		{"half a header", []byte{0x01, 0}},
		{"short payload", good[:len(good)-1]},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := make(chan []byte, 4)
			errc := make(chan error, 1)
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				wc, err := websocket.Accept(w, r, nil)
				if err != nil {
					return
				}
				conn := newWSConn(r.Context(), wc, 1<<21)
				for {
					buf := make([]byte, 64<<10)
					n, err := conn.Read(buf)
					if err != nil {
						errc <- err
						return
					}
					got <- buf[:n]
				}
			}))
			defer hs.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c2, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c2.CloseNow()
			if err := c2.Write(ctx, websocket.MessageBinary, good); err != nil {
				t.Fatal(err)
			}
			if b := <-got; string(b) != string(good) {
				t.Fatalf("a one-frame message read as %q", b)
			}
			// A header past the largest payload is the host's to refuse
			// (with an error frame), whatever follows it.
			huge := binary.BigEndian.AppendUint32([]byte{byte(wire.TypeInput)}, wire.MaxPayload+1)
			if err := c2.Write(ctx, websocket.MessageBinary, append(huge, "xx"...)); err != nil {
				t.Fatal(err)
			}
			if b := <-got; len(b) != wire.HeaderSize+2 {
				t.Fatalf("an oversized header read as %q", b)
			}
			if err := c2.Write(ctx, websocket.MessageBinary, c.msg); err != nil {
				t.Fatal(err)
			}
			// The client reads, so the server's close handshake completes.
			_, _, err = c2.Read(ctx)
			if st := websocket.CloseStatus(err); st != websocket.StatusPolicyViolation {
				t.Errorf("client saw %v (status %v), want a policy-violation close", err, st)
			}
			select {
			case b := <-got:
				t.Fatalf("bytes of a bad message reached the host: %q", b)
			case err := <-errc:
				if !strings.Contains(err.Error(), "one wire frame") {
					t.Errorf("read error %v", err)
				}
			case <-ctx.Done():
				t.Fatal("the bad message neither read nor refused")
			}
		})
	}
}
