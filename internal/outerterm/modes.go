package outerterm

import (
	"slices"
	"strconv"

	"termkeep/internal/vtscan"
)

// modes follows what the bytes written to the terminal switched away from
// a terminal's defaults, so that an attach's end undoes exactly that and
// nothing else: a reset the session never needed can move the cursor
// (DECOM, DECSTBM) or clear state the user's shell relies on. It does no
// I/O.
type modes struct {
	private  map[int]bool // private modes (CSI ? N h/l) last set, of privateDefaults
	insert   bool         // IRM (CSI 4 h)
	keypad   bool         // DECKPAM (ESC =)
	region   bool         // a scroll region (DECSTBM with margins)
	sgr      bool         // an SGR other than a plain reset
	charset  bool         // a character set designated (ESC ( 0 and the like)
	cursor   bool         // a cursor style (DECSCUSR)
	kitty    bool         // the kitty keyboard protocol's stack touched
	otherKey bool         // xterm's modifyOtherKeys set
	sc       vtscan.Scanner
}

// privateDefaults are the private modes an end puts back, with a
// terminal's default for each. DECCOLM (3) is left alone: setting it
// clears the screen.
var privateDefaults = map[int]bool{
	1: false, 5: false, 6: false, 7: true, 9: false, 25: true, 66: false,
	1000: false, 1001: false, 1002: false, 1003: false, 1004: false, 1005: false,
	1006: false, 1015: false, 1016: false, 2004: false, 2026: false,
}

// seq follows the sequence sc has just ended (k is what Step said).
func (m *modes) seq(sc *vtscan.Scanner, k vtscan.Kind) {
	switch k {
	case vtscan.Esc:
		switch sc.Final {
		case '=':
			m.keypad = true
		case '>':
			m.keypad = false
		case '0', 'A', '<', '1', '2':
			m.charset = true // a G-set other than ASCII (ESC ( 0, ESC ) 0…)
		}
	case vtscan.CSI:
		m.csi(sc)
	}
}

func (m *modes) csi(sc *vtscan.Scanner) {
	switch p := sc.Prefix(); {
	case p == '?' && (sc.Final == 'h' || sc.Final == 'l'):
		for i := range sc.NParams() {
			if n := sc.Param(i, 0); hasDefault(n) {
				if m.private == nil {
					m.private = make(map[int]bool)
				}
				m.private[n] = sc.Final == 'h'
			}
		}
	case p == '>' && sc.Final == 'u', p == '=' && sc.Final == 'u':
		m.kitty = true
	case p == '>' && sc.Final == 'm':
		m.otherKey = true
	case p != 0:
	case sc.Final == 'h' || sc.Final == 'l':
		for i := range sc.NParams() {
			if sc.Param(i, 0) == 4 {
				m.insert = sc.Final == 'h'
			}
		}
	case sc.Final == 'r':
		m.region = sc.NParams() > 1 || sc.Param(0, 0) > 1
	case sc.Final == 'm':
		m.sgr = sc.NParams() > 1 || sc.Param(0, 0) != 0
	case sc.Final == 'q':
		m.cursor = true
	}
}

func hasDefault(n int) bool { _, ok := privateDefaults[n]; return ok }

// scan follows every sequence in p: for bytes attach writes that do not
// pass through Term.scan (paints, its own resets).
func (m *modes) scan(p []byte) {
	for _, b := range p {
		if k := m.sc.Step(b); k == vtscan.Esc || k == vtscan.CSI {
			m.seq(&m.sc, k)
		}
	}
}

// reset returns what puts back every mode the terminal was switched away
// from, and forgets them. It moves the cursor only to undo DECOM, whose
// reset homes it (put on the last row, where output would be).
func (m *modes) reset(rows int) []byte {
	var b []byte
	ns := make([]int, 0, len(m.private))
	for n, on := range m.private {
		if on != privateDefaults[n] && n != 6 {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	for _, n := range ns {
		b = append(b, "\x1b[?"...)
		b = strconv.AppendInt(b, int64(n), 10)
		if privateDefaults[n] {
			b = append(b, 'h')
		} else {
			b = append(b, 'l')
		}
	}
	if m.keypad {
		b = append(b, "\x1b>"...)
	}
	if m.insert {
		b = append(b, "\x1b[4l"...)
	}
	if m.cursor {
		b = append(b, "\x1b[0 q"...)
	}
	if m.region {
		b = append(b, "\x1b7\x1b[r\x1b8"...) // DECSTBM homes the cursor: put back
	}
	if m.private[6] {
		b = append(b, "\x1b[?6l\x1b["...)
		b = strconv.AppendInt(b, int64(rows), 10)
		b = append(b, ";1H"...)
	}
	if m.sgr {
		b = append(b, "\x1b[m"...)
	}
	if m.charset {
		b = append(b, "\x1b(B\x0f"...)
	}
	if m.kitty {
		b = append(b, "\x1b[<99u"...)
	}
	if m.otherKey {
		b = append(b, "\x1b[>4m"...)
	}
	*m = modes{sc: m.sc}
	return b
}
