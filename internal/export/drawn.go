package export

import (
	"sort"

	"termkeep/internal/vtscan"
)

// A line's text is not always what it shows. A program that prints AKIA,
// then X, a backspace and the rest of a key, or a person who types a key
// and corrects a typo ("\b \b", "\b\x1b[K"), shows the key whole on the
// screen while no run of its bytes spells it. So a line that moves its
// cursor back is also drawn, as a terminal would draw it within the line
// (backspace, CSI C, D, K and P; a byte a column, which is exact for the
// ASCII that secrets are made of), and searched as shown; a secret found
// there goes with every byte of text that drew it, from the first written
// into any of its cells to the last, whatever else those bytes drew in
// between (a few characters too many are hidden rather than one too few).
// Escape sequences stay, as everywhere. The line's text is still searched
// as it is too: a key drawn and then erased was printed all the same.

// move is a cursor-moving CSI of a line: at its final byte's index in the
// line.
type move struct {
	at    int
	final byte // 'C' forward, 'D' back, 'K' erase in line, 'P' delete characters
	n     int
}

// cell is one column of a drawn line: its character, and the line indexes
// of the first and the last byte that wrote it (-1 for a blank that
// nothing wrote: the cursor moved past the end).
type cell struct {
	b           byte
	first, last int
}

// cursorMove returns the move of the CSI that seq just ended at index i,
// if it is one that changes what a line shows.
func cursorMove(i int, seq *vtscan.Scanner) (move, bool) {
	switch seq.Final {
	case 'C', 'D', 'P':
		return move{at: i, final: seq.Final, n: seq.Param(0, 1)}, true
	case 'K':
		return move{at: i, final: 'K', n: seq.Param(0, 0)}, true
	}
	return move{}, false
}

// drawnSpans adds to spans (over s.text) those of the secrets the line
// shows once drawn.
func (s *redactStream) drawnSpans(spans []span) []span {
	cells := s.cells[:0]
	cur, mi := 0, 0
	for ti := 0; ti < len(s.text) || mi < len(s.moves); {
		if mi < len(s.moves) && (ti == len(s.text) || s.moves[mi].at < s.idx[ti]) {
			m := s.moves[mi]
			mi++
			switch m.final {
			case 'C':
				cur = min(cur+m.n, maxLine)
			case 'D':
				cur = max(cur-m.n, 0)
			case 'K':
				if m.n == 0 && cur < len(cells) {
					cells = cells[:cur] // to the end of the line
				}
			case 'P':
				if cur < len(cells) {
					cells = append(cells[:cur], cells[cur+min(m.n, len(cells)-cur):]...)
				}
			}
			continue
		}
		b, at := s.text[ti], s.idx[ti]
		ti++
		switch {
		case b == '\b':
			cur = max(cur-1, 0)
			continue
		case (b < 0x20 && b != '\t') || b == 0x7f:
			continue // draws nothing here (CR and LF end the line)
		}
		for len(cells) < cur {
			cells = append(cells, cell{b: ' ', first: -1, last: -1})
		}
		if cur == len(cells) {
			cells = append(cells, cell{b: b, first: at, last: at})
		} else {
			c := &cells[cur]
			c.b, c.last = b, at
			if c.first < 0 {
				c.first = at
			}
		}
		cur++
	}
	s.cells = cells

	shown := make([]byte, len(cells))
	for i, c := range cells {
		shown[i] = c.b
	}
	for _, sp := range s.r.match(shown, nil) {
		lo, hi := -1, -1
		for _, c := range cells[sp.start:sp.end] {
			if c.first >= 0 && (lo < 0 || c.first < lo) {
				lo = c.first
			}
			hi = max(hi, c.last)
		}
		if lo < 0 {
			continue
		}
		// The text bytes from lo to hi, by their place in the line.
		start := sort.SearchInts(s.idx, lo)
		end := sort.SearchInts(s.idx, hi+1)
		spans = append(spans, span{start, end, true})
	}
	return spans
}
