package client

import (
	"errors"
	"net"
	"os"

	"termkeep/internal/fdpass"
	"termkeep/internal/wire"
)

// The viewer's half of the output lane (wire/lane.go): attach offers its
// terminal and takes it back.

// OfferLane tells the server that everything below at is on the
// terminal and that it may open a lane there; term, when not nil, is the
// terminal, handed over with the frame (the server keeps it for the
// stream's life; the first offer carries it). Until a lane-end comes
// back, the caller writes nothing of its own to the terminal.
func (s *Stream) OfferLane(at uint64, term *os.File) error {
	if term == nil {
		return s.Send(func(w *wire.Writer) error { return w.Uint64(wire.TypeLane, at) })
	}
	uc, ok := s.conn.(*net.UnixConn)
	if !ok {
		return errors.New("client: this connection cannot carry a terminal")
	}
	// Not term.Fd(), which would make the terminal blocking: a lane's
	// writer must never wait on it.
	rc, err := term.SyscallConn()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var b frameBuf
	wire.NewWriter(&b).Uint64(wire.TypeLane, at)
	cerr := rc.Control(func(fd uintptr) { err = fdpass.Write(uc, b, int(fd)) })
	return errors.Join(cerr, err)
}

// WithdrawLane asks the server for the terminal back; a lane-end frame
// answers once no lane writes to it.
func (s *Stream) WithdrawLane() error {
	return s.Send(func(w *wire.Writer) error { return w.Frame(wire.TypeLaneOff, nil) })
}

// Buffered reports how many bytes of frames have arrived and not been
// read: attach offers a lane only once it has written everything.
func (s *Stream) Buffered() int { return s.r.Buffered() }

type frameBuf []byte

func (b *frameBuf) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}
