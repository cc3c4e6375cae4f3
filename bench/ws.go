package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/wire"
)

// WebSocket viewers: what a browser tab is to the server. Each binary
// message carries exactly one wire frame, header included, in both
// directions (docs/protocol.md, "WebSocket viewers").

// wsTarget is how to reach a server's TCP listener: its origin
// ("http://127.0.0.1:PORT", also what the Origin header must be) and the
// owner token.
type wsTarget struct {
	origin string
	token  string
}

// wsTarget reads the address and token the server wrote to its state
// directory; the url file appears once the listener is up.
func (s *tkServer) wsTarget(ctx context.Context) (wsTarget, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		u, uerr := os.ReadFile(s.dir.URL())
		tok, terr := os.ReadFile(s.dir.Token())
		if uerr == nil && terr == nil && len(strings.TrimSpace(string(u))) > 0 {
			pu, err := url.Parse(strings.TrimSpace(string(u)))
			if err != nil || pu.Host == "" {
				return wsTarget{}, fmt.Errorf("the server's url file holds %q, not an address", u)
			}
			return wsTarget{origin: "http://" + pu.Host, token: strings.TrimSpace(string(tok))}, nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return wsTarget{}, fmt.Errorf("the server wrote no url or token file in %s (is its TCP listener off?): %v %v", s.dir, uerr, terr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wsViewer is one WebSocket viewer. Reads are not safe for concurrent use;
// writes (input, answers to the server's pings) are.
type wsViewer struct {
	c   *websocket.Conn
	wmu sync.Mutex
	w   *wire.Writer
	buf []byte

	welcome wire.Welcome
	stats   frameStats
}

// frameStats counts what a viewer was told besides output: snapshots (the
// server skipped it to the present: it fell behind, or it is fresh) and
// gaps (output no longer retained).
type frameStats struct {
	snapshots int
	gaps      int
	inSnap    bool   // the last frame was part of a snapshot
	snapOff   uint64 // and that snapshot's offset
}

// wsMsgWriter writes each Write as one binary message: one frame, since a
// wire.Writer writes each frame with one Write.
type wsMsgWriter struct{ c *websocket.Conn }

func (m wsMsgWriter) Write(p []byte) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.c.Write(ctx, websocket.MessageBinary, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// dialWS connects a viewer to session ref with the given query (the
// viewer's hello, e.g. "from=0") and, unless noWelcome, reads the Welcome.
func dialWS(ctx context.Context, t wsTarget, ref, query string, noWelcome bool) (*wsViewer, error) {
	u := "ws" + strings.TrimPrefix(t.origin, "http") + "/ws/sessions/" + url.PathEscape(ref)
	if query != "" {
		u += "?" + query
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + t.token}, "Origin": {t.origin}},
	})
	if err != nil {
		status := ""
		if resp != nil {
			status = " (" + resp.Status + ")"
		}
		return nil, fmt.Errorf("dial %s: %w%s", u, err, status)
	}
	// Output frames run to 256 KiB and more; the library's default limit is
	// 32 KiB. Twice the largest frame, as the server allows itself.
	c.SetReadLimit(2*wire.MaxPayload + 2*wire.HeaderSize)
	v := &wsViewer{c: c, w: wire.NewWriter(wsMsgWriter{c})}
	if noWelcome {
		return v, nil
	}
	f, err := v.next()
	if err != nil {
		c.CloseNow()
		return nil, fmt.Errorf("%s: waiting for the welcome: %w", u, err)
	}
	switch f.Type {
	case wire.TypeWelcome:
		if err := wire.ParseJSON(f.Payload, &v.welcome); err != nil {
			c.CloseNow()
			return nil, err
		}
	case wire.TypeError:
		code, msg, _ := wire.ParseError(f.Payload)
		c.CloseNow()
		return nil, &wire.RemoteError{Code: code, Message: msg}
	default:
		c.CloseNow()
		return nil, fmt.Errorf("%s: the server began with %s, not a welcome", u, f.Type)
	}
	return v, nil
}

// next returns the next frame; its payload is valid until the next call.
// The server's pings are answered here, as the web UI answers them, so a
// viewer in a long run is not dropped as silent.
func (v *wsViewer) next() (wire.Frame, error) {
	for {
		// No deadline on the context: a context with one costs a timer per
		// message. close() unblocks a pending read.
		typ, r, err := v.c.Reader(context.Background())
		if err != nil {
			return wire.Frame{}, err
		}
		if typ != websocket.MessageBinary {
			return wire.Frame{}, errors.New("the server sent a text message")
		}
		f, err := wire.ReadFrame(r, &v.buf)
		if err != nil {
			return wire.Frame{}, fmt.Errorf("message is not a frame: %w", err)
		}
		var one [1]byte
		if n, _ := r.Read(one[:]); n != 0 {
			return wire.Frame{}, errors.New("message holds more than one frame")
		}
		if f.Type == wire.TypeServerPing {
			// As internal/client: an answer the server can no longer take
			// does not end the reading of what it sent before it closed.
			x, _ := wire.ParseUint64(f.Type, f.Payload)
			v.send(func(w *wire.Writer) error { return w.Uint64(wire.TypeAnswer, x) })
			continue
		}
		return f, nil
	}
}

func (v *wsViewer) send(fn func(*wire.Writer) error) error {
	v.wmu.Lock()
	defer v.wmu.Unlock()
	return fn(v.w)
}

func (v *wsViewer) input(p []byte) error {
	return v.send(func(w *wire.Writer) error { return w.Input(p) })
}

func (v *wsViewer) close() { v.c.CloseNow() }

// chunk returns the terminal bytes of the next frame that carries any:
// Output data, and Snapshot data (a viewer the server skipped to the
// present is shown the screen, which is where it finds the end marker
// then). Gap and Snapshot frames are counted.
func (v *wsViewer) chunk() ([]byte, error) {
	for {
		f, err := v.next()
		if err != nil {
			return nil, err
		}
		if data, ok, err := v.stats.terminalBytes(f); err != nil || ok {
			return data, err
		}
	}
}

// terminalBytes is what a viewer draws from frame f: (data, true) for an
// Output or Snapshot frame, io.EOF at the session's exit, an error for an
// Error frame, (nil, false) for anything else. Snapshots (one or more
// consecutive Snapshot frames with the same offset) and gaps are counted.
func (st *frameStats) terminalBytes(f wire.Frame) ([]byte, bool, error) {
	snap := f.Type == wire.TypeSnapshot
	defer func() { st.inSnap = snap }()
	switch f.Type {
	case wire.TypeOutput, wire.TypeSnapshot:
		off, data, err := wire.ParseOutput(f.Payload) // a Snapshot payload has the same shape
		if err != nil {
			return nil, false, err
		}
		if snap && (!st.inSnap || off != st.snapOff) {
			st.snapshots++
			st.snapOff = off
		}
		return data, len(data) > 0, nil
	case wire.TypeGap:
		st.gaps++
	case wire.TypeExit:
		return nil, false, io.EOF
	case wire.TypeError:
		code, msg, _ := wire.ParseError(f.Payload)
		return nil, false, &wire.RemoteError{Code: code, Message: msg}
	}
	return nil, false, nil
}
