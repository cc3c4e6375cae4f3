package export

// seqScanner tells, one byte at a time, which bytes of a terminal stream
// are text (printable characters and the C0 controls a terminal executes)
// and which belong to escape sequences (CSI, OSC, DCS, SOS, PM, APC and
// two- or three-byte ESC sequences), across any split of the stream. It
// follows the shape of a VT500 parser as xterm.js implements it, without
// acting on anything: CAN and SUB abort a sequence, ESC starts a new one,
// BEL or ST ends a string.
type seqScanner struct {
	state  uint8
	final  byte   // the final byte of the sequence that just ended
	params []byte // a CSI's parameter bytes (bounded), for kinds kCSI
}

// States.
const (
	sGround = iota
	sEsc
	sEscInter
	sCSI
	sStr
	sStrEsc
)

// Kinds of byte step reports.
const (
	kText = iota // a printable byte or an executed control
	kSeq         // inside an escape sequence
	kCSI         // the final byte of a CSI: final and params are set
	kEsc         // the final byte of an ESC sequence: final is set
)

const maxParams = 32

func (s *seqScanner) step(b byte) int {
	switch s.state {
	case sGround:
		if b == 0x1b {
			s.state = sEsc
			return kSeq
		}
		return kText
	case sEsc, sEscInter:
		switch {
		case b == 0x1b:
			s.state = sEsc
			return kSeq
		case b == 0x18 || b == 0x1a:
			s.state = sGround
			return kText
		case b < 0x20:
			return kText // executed inside the sequence, as a terminal does
		case s.state == sEsc && b == '[':
			s.state, s.params = sCSI, s.params[:0]
			return kSeq
		case s.state == sEsc && (b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_'):
			s.state = sStr
			return kSeq
		case b < 0x30:
			s.state = sEscInter
			return kSeq
		case b < 0x7f:
			s.state, s.final = sGround, b
			return kEsc
		}
		return kSeq
	case sCSI:
		switch {
		case b == 0x1b:
			s.state = sEsc
			return kSeq
		case b == 0x18 || b == 0x1a:
			s.state = sGround
			return kText
		case b < 0x20:
			return kText
		case b >= 0x40 && b < 0x7f:
			s.state, s.final = sGround, b
			return kCSI
		case b >= 0x30 && b < 0x40 && len(s.params) < maxParams:
			s.params = append(s.params, b)
		}
		return kSeq
	case sStr:
		switch b {
		case 0x1b:
			s.state = sStrEsc
		case 0x07, 0x18, 0x1a:
			s.state = sGround
		}
		return kSeq
	case sStrEsc:
		if b == '\\' {
			s.state = sGround
			return kSeq
		}
		s.state = sEsc
		return s.step(b)
	}
	return kText
}

// param returns the i-th numeric parameter of the last CSI, or def when it
// is absent or 0.
func (s *seqScanner) param(i, def int) int {
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
