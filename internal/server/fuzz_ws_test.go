package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/wire"
)

// FuzzWSFrames sends arbitrary WebSocket messages to a live session's
// viewer handler: whatever arrives, the server answers with an error frame
// or closes that connection, the session keeps running, and a fresh viewer
// still gets an answer to its ping. `go test` runs the seeds; `go test
// -fuzz FuzzWSFrames` searches further.
func FuzzWSFrames(f *testing.F) {
	frame := func(fn func(w *wire.Writer) error) []byte {
		var b bytes.Buffer
		fn(wire.NewWriter(&b))
		return b.Bytes()
	}
	ping := frame(func(w *wire.Writer) error { return w.Uint64(wire.TypePing, 7) })
	for _, seed := range [][]byte{
		nil, {0}, {0xff, 0xff, 0xff, 0xff, 0xff}, ping,
		frame(func(w *wire.Writer) error { return w.Input([]byte("typed\r")) }),
		frame(func(w *wire.Writer) error { return w.Resize(100, 30) }),
		frame(func(w *wire.Writer) error { return w.Resize(0, 0) }),
		frame(func(w *wire.Writer) error { return w.Resize(60000, 1) }),
		frame(func(w *wire.Writer) error { return w.Signal(2) }),
		frame(func(w *wire.Writer) error { return w.Uint64(wire.TypeAck, 1<<60) }),
		frame(func(w *wire.Writer) error { return w.Frame(wire.TypeHello, []byte(`{"version":99}`)) }),
		frame(func(w *wire.Writer) error { return w.Frame(wire.TypeAnswer, []byte("\x1b[5;5R")) }),
		frame(func(w *wire.Writer) error { return w.Frame(wire.TypeOutput, []byte("not from a viewer")) }),
		frame(func(w *wire.Writer) error { return w.Frame(wire.Type(0x7f), nil) }),
		append(frame(func(w *wire.Writer) error { return w.Input([]byte("a")) }), ping[:3]...),
		bytes.Repeat(frame(func(w *wire.Writer) error { return w.Input([]byte("x")) }), 500),
	} {
		f.Add(seed)
	}
	ts := newLiveServer(f)
	rec := httptest.NewRecorder()
	ts.srv.http.Handler.ServeHTTP(rec, httptest.NewRequest("POST", "http://termkeep/v1/sessions",
		strings.NewReader(`{"name":"live","cwd":"/","command":["__cat"]}`)))
	if rec.Code != http.StatusCreated {
		f.Fatalf("create the live session: %d %s", rec.Code, rec.Body.String())
	}
	f.Cleanup(func() {
		if h := ts.srv.host(hostID(ts, "live")); h != nil {
			ts.srv.kill(h)
		}
	})
	dial := func(t *testing.T) *websocket.Conn {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, _, err := websocket.Dial(ctx, strings.Replace(ts.base, "http", "ws", 1)+"/ws/sessions/live", &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {"Bearer " + ts.token}, "Origin": {ts.base}},
		})
		if err != nil {
			t.Fatalf("dial a viewer: %v", err)
		}
		c.SetReadLimit(64 << 20)
		return c
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		c := dial(t)
		// Half a second of what the server says back is enough to see it
		// answer or close; this is no deadline on the server.
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		c.Write(ctx, websocket.MessageBinary, msg)
		// Read what the server says until it closes or goes quiet.
		for ctx.Err() == nil {
			if _, _, err := c.Read(ctx); err != nil {
				break
			}
		}
		cancel()
		c.CloseNow()
		if h := ts.srv.host(hostID(ts, "live")); h == nil || h.Exit() != nil {
			// Only a signal or a close frame may end it; then it comes
			// back for the next input.
			if !bytes.ContainsAny(msg, string([]byte{byte(wire.TypeSignal), byte(wire.TypeClose)})) {
				t.Fatalf("the session ended after the message %.200q", msg)
			}
			sess, err := ts.srv.store.Resolve(context.Background(), "live")
			if err != nil {
				t.Fatal(err)
			}
			waitEnded(ts, sess.ID)
			if _, _, err := ts.srv.restore(context.Background(), sess, nil); err != nil {
				t.Fatalf("restore the live session: %v", err)
			}
		}
		// A fresh viewer is served: its ping gets a pong.
		c = dial(t)
		defer c.CloseNow()
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Write(ctx, websocket.MessageBinary, ping); err != nil {
			t.Fatalf("ping after %.200q: %v", msg, err)
		}
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("no pong after the message %.200q: %v", msg, err)
			}
			if len(data) > 0 && wire.Type(data[0]) == wire.TypePong {
				return
			}
		}
	})
}

func hostID(ts *testServer, name string) string {
	s, err := ts.srv.store.Resolve(context.Background(), name)
	if err != nil {
		return ""
	}
	return s.ID
}

// waitEnded waits until the registry has recorded the session's end, so a
// restore finds it ended.
func waitEnded(ts *testServer, id string) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s, err := ts.srv.store.Session(context.Background(), id); err == nil && s.State.Ended() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
