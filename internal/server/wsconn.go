package server

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/coder/websocket"
)

// wsConn is a browser viewer's WebSocket as the byte stream of frames the
// session host reads (one wire frame per binary message). Unlike
// websocket.NetConn it reads each message whole before handing out any of
// its bytes, so a message above the read limit is refused (the connection
// closed with "message too big") before a single frame in it is acted on,
// however slowly the host takes them.
type wsConn struct {
	ctx context.Context
	c   *websocket.Conn

	rmu  sync.Mutex // guards rest; one Read at a time
	rest []byte     // the unread part of the current message

	closeOnce sync.Once
}

var _ io.ReadWriteCloser = (*wsConn)(nil)

// newWSConn wraps c, whose reads are limited to limit bytes per message;
// ctx bounds every read and write.
func newWSConn(ctx context.Context, c *websocket.Conn, limit int64) *wsConn {
	c.SetReadLimit(limit)
	return &wsConn{ctx: ctx, c: c}
}

// Read returns bytes of the current binary message, reading the next one
// whole when it is used up. A text message ends the stream. The connection
// closed normally is io.EOF.
func (w *wsConn) Read(p []byte) (int, error) {
	w.rmu.Lock()
	defer w.rmu.Unlock()
	for len(w.rest) == 0 {
		typ, msg, err := w.c.Read(w.ctx)
		if err != nil {
			switch websocket.CloseStatus(err) {
			case websocket.StatusNormalClosure, websocket.StatusGoingAway:
				return 0, io.EOF
			}
			return 0, err
		}
		if typ != websocket.MessageBinary {
			w.c.Close(websocket.StatusUnsupportedData, "send binary messages, each one wire frame")
			return 0, errors.New("a text message on a viewer's WebSocket")
		}
		w.rest = msg
	}
	n := copy(p, w.rest)
	w.rest = w.rest[n:]
	return n, nil
}

// Write sends p as one binary message: the host writes each frame with a
// single Write, so each message is one frame.
func (w *wsConn) Write(p []byte) (int, error) {
	if err := w.c.Write(w.ctx, websocket.MessageBinary, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close closes the WebSocket normally; it may be called more than once.
func (w *wsConn) Close() error {
	var err error
	w.closeOnce.Do(func() { err = w.c.Close(websocket.StatusNormalClosure, "") })
	return err
}
