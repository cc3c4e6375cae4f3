package client

import (
	"errors"
	"net"

	"termkeep/internal/fdpass"
	"termkeep/internal/wire"
)

// The viewer's half of the output lane (wire/lane.go): attach offers its
// terminal and takes it back; and of the input lane (wire/lanein.go).

// OfferLane tells the server that everything below at is on the
// terminal and that it may open a lane there; term, when not negative, is
// the terminal's descriptor, handed over with the frame (the server keeps
// it for the stream's life; the first offer carries it). Until a lane-end
// comes back, the caller writes nothing of its own to the terminal.
func (s *Stream) OfferLane(at uint64, term int) error {
	if term < 0 {
		return s.Send(func(w *wire.Writer) error { return w.Uint64(wire.TypeLane, at) })
	}
	uc, ok := s.conn.(*net.UnixConn)
	if !ok {
		return errors.New("client: this connection cannot carry a terminal")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var b frameBuf
	wire.NewWriter(&b).Uint64(wire.TypeLane, at)
	return fdpass.Write(uc, b, term)
}

// WithdrawLane asks the server for the terminal back; a lane-end frame
// answers once no lane writes to it.
func (s *Stream) WithdrawLane() error {
	return s.Send(func(w *wire.Writer) error { return w.Frame(wire.TypeLaneOff, nil) })
}

// LaneIn tells the server, on its lane-in or after a lane-input taken as
// typed, that the caller reads its terminal no more until the lane ends:
// the holder may (wire/lanein.go).
func (s *Stream) LaneIn() error {
	return s.Send(func(w *wire.Writer) error { return w.Frame(wire.TypeLaneIn, nil) })
}

// Buffered reports how many bytes of frames have arrived and not been
// read: attach offers a lane only once it has written everything.
func (s *Stream) Buffered() int { return s.r.Buffered() }

type frameBuf []byte

func (b *frameBuf) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}
