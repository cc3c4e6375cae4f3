package termq

import "bytes"

// The grammar of terminal answers: what a terminal sends back when a
// program asks it a question (the Scanner finds the questions). A run of a
// viewer's input counts as an answer only in the exact form real terminals
// send, so that nothing a person types, and nothing a hostile viewer
// crafts, passes for one: digits and separators for the CSI answers, hex
// digits for the colours, bounded lengths, one terminator. Everything here
// is a pure function of its input.
//
//	DA1     ESC [ ? Pn (; Pn?)* c    Pn 1-5 digits, at most 16 (trailing ";" as VT220s send)
//	DA2     ESC [ > Pn (; Pn){0,2} c Pn 1-6 digits
//	status  ESC [ 0 n   or   ESC [ 3 n
//	CPR     ESC [ Pn ; Pn R          Pn 1-5 digits
//	colour  ESC ] 1x ; rgb:H/H/H ST  x 0, 1 or 2; H 1-4 hex digits; ST is BEL or ESC \
//
// An answer is recognized only when it arrives whole within one input
// frame: terminals send each answer in one write. A viewer's partial
// answer is not one.

const (
	da1MaxParams  = 16
	da1MaxDigits  = 5
	da2MaxParams  = 3
	da2MaxDigits  = 6
	cprMaxDigits  = 5 // rows and columns fit a uint16
	colorMaxDigit = 4
)

// parseAnswer reads a well-formed terminal answer at the start of b. It
// returns the question kind the answer is for and its length, or None.
func parseAnswer(b []byte) (Kind, int) {
	if len(b) < 3 || b[0] != 0x1b {
		return None, 0
	}
	switch b[1] {
	case '[':
		return parseCSIAnswer(b)
	case ']':
		return parseColorAnswer(b)
	}
	return None, 0
}

func parseCSIAnswer(b []byte) (Kind, int) {
	switch b[2] {
	case '?':
		if i, _, ok := paramList(b, 3, da1MaxParams, da1MaxDigits, true); ok && i < len(b) && b[i] == 'c' {
			return DA1, i + 1
		}
	case '>':
		if i, _, ok := paramList(b, 3, da2MaxParams, da2MaxDigits, false); ok && i < len(b) && b[i] == 'c' {
			return DA2, i + 1
		}
	case '0', '3':
		if len(b) > 3 && b[3] == 'n' {
			return Status, 4
		}
	}
	if i, n, ok := paramList(b, 2, 2, cprMaxDigits, false); ok && n == 2 && i < len(b) && b[i] == 'R' {
		return Cursor, i + 1
	}
	return None, 0
}

// paramList reads "Pn (; Pn)*" from b[i:]: at most maxN parameters of at
// most maxD digits each, the first never empty, the others empty only when
// emptyLater. It returns the index after the list and how many it read.
func paramList(b []byte, i, maxN, maxD int, emptyLater bool) (end, n int, ok bool) {
	for {
		d := run(b, i, maxD+1, isDigit)
		if d > maxD || (d == 0 && (n == 0 || !emptyLater)) {
			return 0, 0, false
		}
		i += d
		n++
		if i >= len(b) || b[i] != ';' {
			return i, n, true
		}
		if n == maxN {
			return 0, 0, false
		}
		i++
	}
}

func parseColorAnswer(b []byte) (Kind, int) {
	const prefix = ";rgb:"
	if len(b) < 4+len(prefix) || b[2] != '1' || !bytes.HasPrefix(b[4:], []byte(prefix)) {
		return None, 0
	}
	kind := oscColorKind(b[3])
	if kind == None {
		return None, 0
	}
	i := 4 + len(prefix)
	for c := range 3 {
		if c > 0 {
			if i >= len(b) || b[i] != '/' {
				return None, 0
			}
			i++
		}
		d := run(b, i, colorMaxDigit+1, isHex)
		if d == 0 || d > colorMaxDigit {
			return None, 0
		}
		i += d
	}
	switch {
	case i < len(b) && b[i] == 0x07:
		return kind, i + 1
	case i+1 < len(b) && b[i] == 0x1b && b[i+1] == '\\':
		return kind, i + 2
	}
	return None, 0
}

// run counts the bytes from b[i] on that pass is, stopping at limit.
func run(b []byte, i, limit int, is func(byte) bool) int {
	n := 0
	for i+n < len(b) && n < limit && is(b[i+n]) {
		n++
	}
	return n
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// alsoKey reports whether a cursor position report is also a key a person
// can type: F3 with a modifier is ESC [ 1 ; m R.
func alsoKey(k Kind, ans []byte) bool {
	return k == Cursor && bytes.HasPrefix(ans, []byte("\x1b[1;")) && len(ans) <= len("\x1b[1;16R")
}

// split cuts a viewer's input into runs of typing (kind None) and
// well-formed answers, in order, and calls each for every piece. The
// pieces together are exactly p. each must not retain piece.
func split(p []byte, each func(piece []byte, k Kind)) {
	start := 0 // where the current run of typing began
	for i := 0; i < len(p); {
		j := bytes.IndexByte(p[i:], 0x1b)
		if j < 0 {
			break
		}
		i += j
		k, n := parseAnswer(p[i:])
		if k == None {
			i++
			continue
		}
		if i > start {
			each(p[start:i], None)
		}
		each(p[i:i+n], k)
		i += n
		start = i
	}
	if start < len(p) {
		each(p[start:], None)
	}
}

// Filter is what a writable viewer's input sends to the session: its
// typing, and each answer that take says an outstanding question takes
// (Arbiter.FromViewer; take consumes the question). An answer nobody asked
// for is dropped, except a cursor report that is also a key (alsoKey),
// which passes as the key. take is called once for each answer, in order.
// The result may be p itself; Filter does not retain p.
func Filter(p []byte, take func(Kind) bool) []byte {
	if bytes.IndexByte(p, 0x1b) < 0 {
		return p
	}
	out := make([]byte, 0, len(p))
	split(p, func(piece []byte, k Kind) {
		if k == None || take(k) || alsoKey(k, piece) {
			out = append(out, piece...)
		}
	})
	return out
}

// OnlyAnswers reports whether p is nothing but well-formed answers: what
// a read-only viewer's terminal sends on its own when the output asks it
// something. Its answers are never forwarded (the caller's model answers
// for it), but they are not an attempt to type either.
func OnlyAnswers(p []byte) bool {
	only := len(p) > 0
	split(p, func(_ []byte, k Kind) {
		if k == None {
			only = false
		}
	})
	return only
}
