package mcp

import (
	"bytes"
	"unicode/utf8"
)

// cleaner turns terminal output into text a model can read: valid UTF-8
// (invalid bytes become U+FFFD) and, unless raw, without escape sequences
// (CSI, OSC, DCS, SOS, PM, APC, charset and other ESC sequences), with
// "\r\n" and a lone "\r" as "\n" (a lone "\r" right after a line end adds
// nothing), a backspace taking back the character before it on its line,
// and other control characters but tab and newline dropped. Raw keeps every
// sequence and control character, still as valid UTF-8.
//
// Bytes are cut only between sequences: when more output may follow, an
// incomplete UTF-8 character, escape sequence or "\r" at the end of the
// input is not consumed, and belongs to the next read. The caller learns
// how much was consumed and resumes there, so no byte is shown twice and
// none is torn.
//
// With collapse (and not raw), "\r" returns to the start of the line as a
// terminal does, so what follows overwrites it, and an erase to the end of
// the line (ESC [ K) erases: a progress bar redrawn 300 times reads as the
// one line the screen shows, not 300. A backspace then moves back over a
// character rather than deleting it. The cursor's place carries over from
// one call to the next, so a cleaner that collapses is used through a
// pointer across the reads of one stream.
type cleaner struct {
	raw      bool
	collapse bool
	// back is how many bytes of dst (the text so far) lie right of the
	// cursor, on its line: the next character overwrites there. 0 appends.
	back int
	// src, when not nil, is kept aligned with the text (the dst of clean,
	// across calls): for each byte of it, the offset of the input element
	// it came from, base being the offset of the input's first byte. A
	// match in the text is mapped back to offsets with it.
	src  *[]uint64
	base uint64
}

// maxHold bounds what is held back as an incomplete sequence: a longer
// unterminated OSC or DCS is passed through as it is (raw) or dropped.
const maxHold = 64 << 10

// clean appends the text of p to dst and returns it with the number of
// bytes of p consumed. final says that nothing follows p: everything is
// consumed.
func (c *cleaner) clean(dst []byte, p []byte, final bool) ([]byte, int) {
	i := 0
	collapse := c.collapse && !c.raw
	if c.back > len(dst) || !collapse {
		c.back = 0
	}
	emit := func(b []byte, at int) {
		if c.back > 0 && b[0] != '\n' {
			// Overwrite the character under the cursor.
			pos := len(dst) - c.back
			_, size := utf8.DecodeRune(dst[pos:])
			dst = splice(dst, pos, pos+size, b)
			if c.src != nil {
				offs := make([]uint64, len(b))
				for k := range offs {
					offs[k] = c.base + uint64(at)
				}
				*c.src = splice(*c.src, pos, pos+size, offs)
			}
			c.back -= size
			return
		}
		c.back = 0 // a newline leaves the line as it is, below it
		dst = append(dst, b...)
		if c.src != nil {
			for range b {
				*c.src = append(*c.src, c.base+uint64(at))
			}
		}
	}
	for i < len(p) {
		b := p[i]
		switch {
		case b == 0x1b:
			n, complete := escLen(p[i:])
			if !complete {
				if !final && len(p)-i <= maxHold {
					return dst, i
				}
				n = len(p) - i
			}
			if collapse && eraseLine(p[i:i+n]) {
				dst = dst[:len(dst)-c.back]
				if c.src != nil {
					*c.src = (*c.src)[:len(*c.src)-c.back]
				}
				c.back = 0
			}
			if c.raw {
				// Kept, but as valid UTF-8 (an OSC's text may not be).
				for j := i; j < i+n; {
					r, size := utf8.DecodeRune(p[j : i+n])
					if r == utf8.RuneError && size <= 1 {
						emit([]byte(string(utf8.RuneError)), i)
					} else {
						emit(p[j:j+size], i)
					}
					j += size
				}
			}
			i += n
		case b == '\r':
			if i+1 == len(p) && !final && !c.raw {
				return dst, i // "\r\n" may be cut in two
			}
			if c.raw {
				emit(p[i:i+1], i)
			} else if i+1 < len(p) && p[i+1] == '\n' {
				c.back = 0
				emit([]byte{'\n'}, i)
				i++
			} else if collapse {
				c.back = len(dst) - (bytes.LastIndexByte(dst, '\n') + 1)
			} else if len(dst) > 0 && dst[len(dst)-1] != '\n' {
				emit([]byte{'\n'}, i)
			}
			i++
		case b == '\b' && collapse:
			if pos := len(dst) - c.back; pos > 0 && dst[pos-1] != '\n' {
				_, size := utf8.DecodeLastRune(dst[:pos])
				c.back += size
			}
			i++
		case b == '\b' && !c.raw:
			if len(dst) > 0 && dst[len(dst)-1] != '\n' {
				_, size := utf8.DecodeLastRune(dst)
				dst = dst[:len(dst)-size]
				if c.src != nil {
					*c.src = (*c.src)[:len(*c.src)-size]
				}
			}
			i++
		case b < 0x20 || b == 0x7f:
			if b == '\n' {
				c.back = 0
			}
			if c.raw || b == '\n' || b == '\t' {
				emit(p[i:i+1], i)
			}
			i++
		case b < utf8.RuneSelf:
			emit(p[i:i+1], i)
			i++
		default:
			if !utf8.FullRune(p[i:]) && !final {
				return dst, i
			}
			r, size := utf8.DecodeRune(p[i:])
			switch {
			case r == utf8.RuneError && size <= 1:
				emit([]byte(string(utf8.RuneError)), i)
			case r >= 0x80 && r <= 0x9f && !c.raw:
				// a C1 control: nothing to read
			default:
				emit(p[i:i+size], i)
			}
			i += size
		}
	}
	return dst, i
}

// escLen returns the length of the escape sequence at the start of p (p[0]
// is ESC) and whether it is complete within p.
func escLen(p []byte) (int, bool) {
	if len(p) < 2 {
		return len(p), false
	}
	switch p[1] {
	case '[': // CSI: parameters, intermediates, a final byte
		for i := 2; i < len(p); i++ {
			switch c := p[i]; {
			case c >= 0x40 && c <= 0x7e:
				return i + 1, true
			case c >= 0x20 && c <= 0x3f:
			default:
				return i, true // malformed: the sequence ends before c
			}
		}
		return len(p), false
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: up to ST (or BEL for OSC)
		for i := 2; i < len(p); i++ {
			switch p[i] {
			case 0x07:
				if p[1] == ']' {
					return i + 1, true
				}
			case 0x1b:
				if i+1 == len(p) {
					return len(p), false
				}
				if p[i+1] == '\\' {
					return i + 2, true
				}
				return i, true // cut by another sequence
			case 0x18, 0x1a: // CAN, SUB abort it
				return i + 1, true
			}
		}
		return len(p), false
	}
	// ESC, intermediates (0x20-0x2f), a final byte (0x30-0x7e).
	for i := 1; i < len(p); i++ {
		switch c := p[i]; {
		case c >= 0x20 && c <= 0x2f:
		case c >= 0x30 && c <= 0x7e:
			return i + 1, true
		default:
			return i, true
		}
	}
	return len(p), false
}

// splice replaces s[i:j] with r.
func splice[T any](s []T, i, j int, r []T) []T {
	if len(r) == j-i {
		copy(s[i:], r)
		return s
	}
	tail := append([]T(nil), s[j:]...)
	return append(append(s[:i], r...), tail...)
}

// eraseLine reports whether seq (a whole escape sequence) erases from the
// cursor to the end of its line: CSI K or CSI 0 K.
func eraseLine(seq []byte) bool {
	return len(seq) >= 3 && seq[1] == '[' && seq[len(seq)-1] == 'K' &&
		(len(seq) == 3 || string(seq[2:len(seq)-1]) == "0")
}
