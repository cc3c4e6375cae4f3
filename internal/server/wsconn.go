package server

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"sync"

	"github.com/coder/websocket"

	"termkeep/internal/wire"
)

// wsConn is a browser viewer's WebSocket as the byte stream of frames the
// session host reads (exactly one wire frame per binary message, refused otherwise). Unlike
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
		if !oneFrame(msg) {
			// Two frames in one message, or a cut one: the protocol says
			// one frame per message, and a peer that breaks it is not
			// acted on at all.
			w.c.Close(websocket.StatusPolicyViolation, "each message must hold exactly one wire frame")
			return 0, errors.New("a viewer's WebSocket message is not exactly one wire frame")
		}
		w.rest = msg
	}
	n := copy(p, w.rest)
	w.rest = w.rest[n:]
	return n, nil
}

// oneFrame reports whether msg is exactly one wire frame: a header and
// the payload length it names, nothing more. What the frame holds is the
// host's to judge, and so is a header naming more than the largest
// payload: the host refuses it with an error frame, as on the unix socket.
func oneFrame(msg []byte) bool {
	if len(msg) < wire.HeaderSize {
		return false
	}
	n := binary.BigEndian.Uint32(msg[1:wire.HeaderSize])
	return n > wire.MaxPayload || uint64(len(msg)-wire.HeaderSize) == uint64(n)
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
