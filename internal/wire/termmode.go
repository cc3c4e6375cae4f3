package wire

import (
	"encoding/binary"
	"fmt"
)

// TypeTermMode is the pty's input mode, as its terminal settings (termios)
// say it: offset uint64 (the log's end when the holder read them), then
// flags uint8 (TermEcho, TermCanonical; the other bits are reserved and
// zero). Holder → server on every change and at connect, version 7;
// server → viewer likewise, to viewers of version 7 or later. Without one
// the mode is unknown, as it is under an older holder.
const TypeTermMode Type = 0x4f

// Flags of a term-mode frame.
const (
	TermEcho      = 0x01 // ECHO: the line discipline echoes what is typed
	TermCanonical = 0x02 // ICANON: input is edited a line at a time
)

// TermMode is the input mode of a session's pty: what a viewer needs to
// know before it shows typing it has not seen echoed (a password prompt
// turns echo off, a full-screen program turns off canonical mode).
type TermMode struct {
	// At is the log's end when the mode was read: it holds from at most
	// there on.
	At        uint64
	Echo      bool
	Canonical bool
}

// TermMode writes a term-mode frame.
func (w *Writer) TermMode(m TermMode) error {
	var flags byte
	if m.Echo {
		flags |= TermEcho
	}
	if m.Canonical {
		flags |= TermCanonical
	}
	b := w.begin(TypeTermMode, 9)
	b = binary.BigEndian.AppendUint64(b, m.At)
	return w.flush(append(b, flags))
}

// ParseTermMode decodes a term-mode payload.
func ParseTermMode(p []byte) (TermMode, error) {
	if len(p) != 9 {
		return TermMode{}, short(TypeTermMode, p, 9)
	}
	at := binary.BigEndian.Uint64(p)
	if at > 1<<62 {
		return TermMode{}, fmt.Errorf("%w: term-mode offset %d out of range", ErrMalformed, at)
	}
	flags := p[8]
	if flags&^(TermEcho|TermCanonical) != 0 {
		return TermMode{}, fmt.Errorf("%w: term-mode flags 0x%02x have reserved bits set", ErrMalformed, flags)
	}
	return TermMode{At: at, Echo: flags&TermEcho != 0, Canonical: flags&TermCanonical != 0}, nil
}
