package termq

import "bytes"

// Scanner finds questions in output split into chunks at any byte. Its
// zero value is ready to use. It is not safe for concurrent use: one
// reader of one session's output owns it.
type Scanner struct {
	carry []byte // an unfinished sequence from the end of the last chunk
}

// maxQueryLen bounds the sequences the scanner looks at; longer ones are
// not questions.
const maxQueryLen = 16

// Scan calls found for every question in p, with the offset just after it
// (base is the offset of p[0]). A question cut across two calls is found
// in the second. Scan does not retain p.
func (s *Scanner) Scan(p []byte, base uint64, found func(k Kind, end uint64)) {
	if len(s.carry) > 0 {
		// Complete the carried sequence with the start of p.
		n := min(len(p), maxQueryLen)
		joined := append(append([]byte{}, s.carry...), p[:n]...)
		carried := len(s.carry)
		s.carry = s.carry[:0]
		k, l, partial := parseQuery(joined)
		switch {
		case k != None && l > carried:
			found(k, base+uint64(l-carried))
		case partial && len(joined) < maxQueryLen && n == len(p):
			s.carry = append(s.carry, joined...)
			return
		}
	}
	for i := 0; i < len(p); {
		j := bytes.IndexByte(p[i:], 0x1b)
		if j < 0 {
			return
		}
		i += j
		k, l, partial := parseQuery(p[i:])
		if k != None {
			found(k, base+uint64(i+l))
			i += l
			continue
		}
		if partial && len(p)-i < maxQueryLen {
			s.carry = append(s.carry[:0], p[i:]...)
			return
		}
		i++
	}
}

// parseQuery reads a question at the start of b (which starts with ESC). It
// returns its kind and length, or partial when b ends before the sequence
// could be decided.
func parseQuery(b []byte) (k Kind, n int, partial bool) {
	if len(b) < 2 {
		return None, 0, true
	}
	switch b[1] {
	case '[':
		i := 2
		prefix := byte(0)
		if i < len(b) && (b[i] == '>' || b[i] == '?') {
			prefix = b[i]
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' && i-start < 4 {
			i++
		}
		if i == len(b) {
			return None, 0, true
		}
		param := string(b[start:i])
		switch {
		case b[i] == 'c' && prefix == 0 && (param == "" || param == "0"):
			return DA1, i + 1, false
		case b[i] == 'c' && prefix == '>' && (param == "" || param == "0"):
			return DA2, i + 1, false
		case b[i] == 'n' && prefix == 0 && param == "5":
			return Status, i + 1, false
		case b[i] == 'n' && prefix == 0 && param == "6":
			return Cursor, i + 1, false
		}
		return None, 0, false
	case ']':
		// OSC 1x ; ? terminated by BEL or ST.
		want := []byte("\x1b]1")
		for i := 0; i < len(want) && i < len(b); i++ {
			if b[i] != want[i] {
				return None, 0, false
			}
		}
		if len(b) < 6 {
			return None, 0, true
		}
		kind := oscColorKind(b[3])
		if kind == None {
			return None, 0, false
		}
		if b[4] != ';' || b[5] != '?' {
			return None, 0, false
		}
		if len(b) < 7 {
			return None, 0, true
		}
		if b[6] == 0x07 {
			return kind, 7, false
		}
		if b[6] == 0x1b {
			if len(b) < 8 {
				return None, 0, true
			}
			if b[7] == '\\' {
				return kind, 8, false
			}
		}
		return None, 0, false
	}
	return None, 0, false
}

// oscColorKind maps the digit after "OSC 1" to the color it is about:
// 10 foreground, 11 background, 12 cursor.
func oscColorKind(d byte) Kind {
	switch d {
	case '0':
		return Foreground
	case '1':
		return Background
	case '2':
		return CursorColor
	}
	return None
}
