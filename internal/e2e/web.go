package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/api"
	"termkeep/internal/wire"
)

// WebEnv is an env whose server listens for browsers on a free port.
type WebEnv struct {
	*Env
	Base  string // "http://127.0.0.1:PORT"
	Token string
	// client makes the requests and WebSocket dials (nil: the default
	// client); a server with TLS needs one that trusts its certificate.
	Client *http.Client
}

func NewWebEnv(t *testing.T) *WebEnv {
	t.Helper()
	e := NewEnv(t)
	e.StartServer()
	u, err := os.ReadFile(filepath.Join(e.Dir, "url"))
	if err != nil {
		t.Fatalf("the server wrote no url file: %v", err)
	}
	tok, err := os.ReadFile(filepath.Join(e.Dir, "token"))
	if err != nil {
		t.Fatalf("the server wrote no token file: %v", err)
	}
	return &WebEnv{Env: e, Base: strings.TrimSuffix(strings.TrimSpace(string(u)), "/"), Token: strings.TrimSpace(string(tok))}
}

// API sends a request with the bearer token and decodes a JSON answer into
// out (when not nil); it fails the test unless the status is want.
func (w *WebEnv) API(method, path string, body any, want int, out any) {
	w.T.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, w.Base+path, rd)
	req.Header.Set("Authorization", "Bearer "+w.Token)
	hc := w.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		w.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		w.T.Fatalf("%s %s: %s, want %d: %s", method, path, resp.Status, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			w.T.Fatalf("%s %s: decode %q: %v", method, path, b, err)
		}
	}
}

// WSViewer is a browser-like viewer: a WebSocket carrying one wire frame
// per binary message.
type WSViewer struct {
	T      *testing.T
	C      *websocket.Conn
	W      *wire.Writer
	Frames chan wire.Frame // copies; closed when the connection ends
	Mu     sync.Mutex      // guards err
	Err    error           // why the connection ended
	Text   strings.Builder // snapshot and output bytes seen by until
}

// msgWriter writes each Write as one binary message, which is one frame
// for a wire.Writer.
type msgWriter struct{ c *websocket.Conn }

func (m msgWriter) Write(p []byte) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.c.Write(ctx, websocket.MessageBinary, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *WebEnv) DialViewer(path string) *WSViewer {
	w.T.Helper()
	return w.DialViewerWith(path, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + w.Token}}})
}

// DialViewerWith is DialViewer authenticated by opts instead of the token.
func (w *WebEnv) DialViewerWith(path string, opts *websocket.DialOptions) *WSViewer {
	w.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts.HTTPClient = w.Client
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(w.Base, "http")+path, opts)
	if err != nil {
		status := ""
		if resp != nil {
			status = resp.Status
		}
		w.T.Fatalf("dial %s: %v %s", path, err, status)
	}
	v := &WSViewer{T: w.T, C: c, W: wire.NewWriter(msgWriter{c}), Frames: make(chan wire.Frame, 1024)}
	go func() {
		defer close(v.Frames)
		// As the page does, it answers the server's pings as they come,
		// whoever reads its frames and however slowly: a test that takes
		// long keeps its viewers.
		pongs := wire.NewWriter(msgWriter{c})
		for {
			typ, msg, err := c.Read(context.Background())
			if err != nil {
				v.Mu.Lock()
				v.Err = err
				v.Mu.Unlock()
				return
			}
			var buf []byte
			f, ferr := wire.ReadFrame(bytes.NewReader(msg), &buf)
			if typ != websocket.MessageBinary || ferr != nil || wire.HeaderSize+len(f.Payload) != len(msg) {
				v.Mu.Lock()
				v.Err = ferr
				v.Mu.Unlock()
				w.T.Errorf("message (%v, %d bytes) is not exactly one frame: %v", typ, len(msg), ferr)
				return
			}
			if f.Type == wire.TypeServerPing {
				pongs.Frame(wire.TypeAnswer, f.Payload)
			}
			v.Frames <- f
		}
	}()
	w.T.Cleanup(func() { c.CloseNow() })
	return v
}

// Until reads frames until fn accepts one, collecting the terminal bytes.
func (v *WSViewer) Until(what string, fn func(wire.Frame) bool) wire.Frame {
	v.T.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case f, ok := <-v.Frames:
			if !ok {
				v.Mu.Lock()
				err := v.Err
				v.Mu.Unlock()
				v.T.Fatalf("waiting for %s: connection ended: %v (saw %q)", what, err, v.Text.String())
			}
			switch f.Type {
			case wire.TypeOutput, wire.TypeSnapshot:
				_, data, _ := wire.ParseOutput(f.Payload)
				v.Text.Write(data)
			}
			if fn(f) {
				return f
			}
		case <-timeout:
			v.T.Fatalf("timed out waiting for %s (saw %q)", what, v.Text.String())
		}
	}
}

func (v *WSViewer) UntilText(s string) {
	v.T.Helper()
	v.Until("output "+s, func(wire.Frame) bool { return strings.Contains(v.Text.String(), s) })
}

func IsType(t wire.Type) func(wire.Frame) bool {
	return func(f wire.Frame) bool { return f.Type == t }
}

// SessionEvents returns the kinds of session id's events, from `termkeep
// events --json`.
func (e *Env) SessionEvents(id string) ([]string, []api.Event) {
	e.T.Helper()
	var kinds []string
	var all []api.Event
	for _, ev := range e.Events() {
		if ev.Session == id {
			kinds = append(kinds, ev.Kind)
			all = append(all, ev)
		}
	}
	return kinds, all
}

// Events returns every event kept, from `termkeep events --json`.
func (e *Env) Events() []api.Event {
	e.T.Helper()
	var all []api.Event
	sc := bufio.NewScanner(strings.NewReader(e.MustTk("events", "--json")))
	for sc.Scan() {
		var ev api.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			e.T.Fatalf("events --json line %q: %v", sc.Text(), err)
		}
		all = append(all, ev)
	}
	return all
}
