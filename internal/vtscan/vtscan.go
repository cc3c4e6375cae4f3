// Package vtscan tells, one byte at a time, which bytes of a terminal
// stream are text (printable characters and the C0 controls a terminal
// executes) and which belong to escape sequences (CSI, OSC, DCS, SOS, PM,
// APC and two- or three-byte ESC sequences), across any split of the
// stream, and hands out what the readers of a log want of a sequence: a
// CSI's final byte and parameters, an ESC sequence's final byte, an OSC's
// payload. It follows the shape of a VT500 parser as xterm.js implements
// it, without acting on anything: CAN and SUB abort a sequence, ESC starts
// a new one (and so ends an OSC, as xterm.js takes it), BEL or ST ends a
// string.
package vtscan

import "bytes"

// Kind is what Step says of a byte.
type Kind uint8

const (
	Text Kind = iota // a printable byte or an executed control
	Seq              // inside an escape sequence
	CSI              // the final byte of a CSI: Final and Param tell it
	Esc              // the final byte of an ESC sequence: Final is set
	OSC              // the byte that ended an OSC (BEL, or the ESC of ST or of a new sequence): Payload holds it
)

// States.
const (
	ground = iota
	esc
	escInter
	csi
	osc
	str
	strEsc
)

// Bounds of what a Scanner keeps of a sequence.
const (
	maxParams  = 32
	MaxPayload = 64 // an OSC's payload kept: enough to tell OSC 133 and its fields
)

// Scanner is the state between bytes. The zero value is at the ground
// state.
type Scanner struct {
	state   uint8
	Final   byte   // the final byte of the sequence that just ended
	params  []byte // a CSI's parameter bytes (bounded)
	payload []byte // an OSC's payload (bounded)
}

// Ground reports whether the scanner is outside any sequence.
func (s *Scanner) Ground() bool { return s.state == ground }

// Kinds returns a scanner in the same state that keeps no parameters or
// payload of the sequence in progress: for telling kinds ahead of s.
func (s *Scanner) Kinds() Scanner { return Scanner{state: s.state} }

// Step takes the next byte of the stream.
func (s *Scanner) Step(b byte) Kind {
	switch s.state {
	case ground:
		if b == 0x1b {
			s.state = esc
			return Seq
		}
		return Text
	case esc, escInter:
		switch {
		case b == 0x1b:
			s.state = esc
			return Seq
		case b == 0x18 || b == 0x1a:
			s.state = ground
			return Text
		case b < 0x20:
			return Text // executed inside the sequence, as a terminal does
		case s.state == esc && b == '[':
			s.state, s.params = csi, s.params[:0]
			return Seq
		case s.state == esc && b == ']':
			s.state, s.payload = osc, s.payload[:0]
			return Seq
		case s.state == esc && (b == 'P' || b == 'X' || b == '^' || b == '_'):
			s.state = str
			return Seq
		case b < 0x30:
			s.state = escInter
			return Seq
		case b < 0x7f:
			s.state, s.Final = ground, b
			return Esc
		}
		return Seq
	case csi:
		switch {
		case b == 0x1b:
			s.state = esc
			return Seq
		case b == 0x18 || b == 0x1a:
			s.state = ground
			return Text
		case b < 0x20:
			return Text
		case b >= 0x40 && b < 0x7f:
			s.state, s.Final = ground, b
			return CSI
		case b >= 0x30 && b < 0x40 && len(s.params) < maxParams:
			s.params = append(s.params, b)
		}
		return Seq
	case osc:
		switch {
		case b == 0x07:
			s.state = ground
			return OSC
		case b == 0x1b:
			s.state = strEsc
			return OSC
		case b == 0x18 || b == 0x1a:
			s.state = ground
		case b >= 0x20 && len(s.payload) < MaxPayload:
			s.payload = append(s.payload, b)
		}
		return Seq
	case str:
		switch b {
		case 0x1b:
			s.state = strEsc
		case 0x07, 0x18, 0x1a:
			s.state = ground
		}
		return Seq
	case strEsc:
		if b == '\\' {
			s.state = ground
			return Seq
		}
		s.state = esc
		return s.Step(b)
	}
	return Text
}

// Payload returns the payload of the OSC that just ended (at most
// MaxPayload bytes), valid until the next OSC begins.
func (s *Scanner) Payload() []byte { return s.payload }

// InOSC reports whether an OSC is in progress: Payload holds its first
// bytes so far.
func (s *Scanner) InOSC() bool { return s.state == osc }

// MayBeCSI reports whether the sequence in progress is a CSI, or an ESC
// that a '[' would make one.
func (s *Scanner) MayBeCSI() bool { return s.state == csi || s.state == esc }

// Prefix returns the private marker that opened the last CSI's
// parameters ('<', '=', '>' or '?'), or 0.
func (s *Scanner) Prefix() byte {
	if len(s.params) > 0 && s.params[0] >= '<' {
		return s.params[0]
	}
	return 0
}

// NParams returns how many parameters the last CSI had (an empty one
// counts).
func (s *Scanner) NParams() int {
	return bytes.Count(s.params, []byte{';'}) + 1
}

// Param returns the i-th numeric parameter of the last CSI, or def when it
// is absent or 0.
func (s *Scanner) Param(i, def int) int {
	idx, n, set := 0, 0, false
	for _, c := range s.params {
		if c == ';' {
			if idx == i {
				break
			}
			idx++
			continue
		}
		if idx == i && c >= '0' && c <= '9' {
			n, set = min(n*10+int(c-'0'), 1<<20), true
		}
	}
	if idx != i || !set || n == 0 {
		return def
	}
	return n
}
