package export

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"termkeep/internal/outlog"
	"termkeep/internal/vtscan"
)

// Hit is a line Grep found.
type Hit struct {
	Offset uint64    // of the line's first byte
	Time   time.Time // when that byte was logged (zero when the log does not say)
	Line   string    // its text
}

// maxLineCols bounds a line Grep puts together: a longer one is cut.
const maxLineCols = 16 << 10

// Grep calls fn with every line of [from, to) of l whose text matches re,
// in order. A line's text is what a terminal would show of it, escape
// sequences left out: a carriage return goes back to its start and what
// follows overwrites what was there (so a progress bar's line is its last
// state), backspace and tabs move, erasing in the line erases; a line ends
// at a line feed, at any cursor movement to another row (a full-screen
// program's rows each count as a line), and at a gap. An error from fn
// stops the search and is returned.
func Grep(l Log, re *regexp.Regexp, from, to uint64, fn func(Hit) error) error {
	g := &lineText{emit: func(h Hit) error {
		if h.Line != "" && re.MatchString(h.Line) {
			return fn(h)
		}
		return nil
	}}
	err := l.Chunks(from, to, func(c outlog.Chunk) error {
		switch c.Kind {
		case outlog.ChunkData:
			return g.feed(c.Offset, c.Time, c.Data)
		case outlog.ChunkGap:
			g.seq, g.un = vtscan.Scanner{}, 0
			return g.end()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return g.end()
}

// lineText renders a byte stream into lines of text.
type lineText struct {
	emit  func(Hit) error
	cells []rune
	col   int
	open  bool // a line has begun
	start uint64
	at    time.Time
	seq   vtscan.Scanner
	u     [utf8.UTFMax]byte // an incomplete UTF-8 character
	un    int
}

func (g *lineText) feed(off uint64, at time.Time, p []byte) error {
	for i, b := range p {
		if !g.open {
			g.open, g.start, g.at = true, off+uint64(i), at
		}
		var err error
		switch g.seq.Step(b) {
		case vtscan.Text:
			err = g.text(b)
		case vtscan.CSI:
			err = g.csi()
		case vtscan.Esc:
			switch g.seq.Final {
			case 'D', 'E', 'M', 'c': // index, next line, reverse index, reset
				err = g.end()
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (g *lineText) text(b byte) error {
	if b >= utf8.RuneSelf {
		if g.un > 0 && utf8.RuneStart(b) {
			g.flushRune(true) // cut short by a new character
		}
		g.u[g.un] = b
		g.un++
		g.flushRune(false)
		return nil
	}
	g.flushRune(true)
	switch b {
	case '\n', '\v', '\f':
		return g.end()
	case '\r':
		g.col = 0
	case '\b':
		g.col = max(g.col-1, 0)
	case '\t':
		g.col = min((g.col/8+1)*8, maxLineCols)
	default:
		if b >= 0x20 && b < 0x7f {
			g.put(rune(b))
		}
	}
	return nil
}

// flushRune puts the characters u holds whole; with force, the rest too
// (an invalid or cut sequence is U+FFFD).
func (g *lineText) flushRune(force bool) {
	for g.un > 0 && (force || utf8.FullRune(g.u[:g.un])) {
		r, n := utf8.DecodeRune(g.u[:g.un])
		copy(g.u[:], g.u[n:g.un])
		g.un -= n
		g.put(r)
	}
}

// put writes r at the cursor; past maxLineCols, nothing is kept.
func (g *lineText) put(r rune) {
	if g.col >= maxLineCols {
		return
	}
	for len(g.cells) <= g.col {
		g.cells = append(g.cells, ' ')
	}
	g.cells[g.col] = r
	g.col++
}

func (g *lineText) csi() error {
	s := &g.seq
	switch s.Final {
	case 'K': // erase in line
		switch s.Param(0, 0) {
		case 0:
			g.cells = g.cells[:min(g.col, len(g.cells))]
		case 1:
			for i := 0; i <= g.col && i < len(g.cells); i++ {
				g.cells[i] = ' '
			}
		case 2:
			g.cells = g.cells[:0]
		}
	case 'X': // erase characters
		for i := g.col; i < g.col+s.Param(0, 1) && i < len(g.cells); i++ {
			g.cells[i] = ' '
		}
	case 'P': // delete characters
		if g.col < len(g.cells) {
			n := min(s.Param(0, 1), len(g.cells)-g.col)
			g.cells = append(g.cells[:g.col], g.cells[g.col+n:]...)
		}
	case 'C': // forward
		g.col = min(g.col+s.Param(0, 1), maxLineCols)
	case 'D': // back
		g.col = max(g.col-s.Param(0, 1), 0)
	case 'G', '`': // to a column
		g.col = min(s.Param(0, 1)-1, maxLineCols)
	case 'H', 'f', 'd', 'A', 'B', 'E', 'F':
		// To another row: the line is done; a new one starts at the column
		// the cursor went to (a full-screen program's rows are lines).
		if err := g.end(); err != nil {
			return err
		}
		switch s.Final {
		case 'H', 'f':
			g.col = min(s.Param(1, 1)-1, maxLineCols)
		case 'A', 'B', 'd':
		default:
			g.col = 0
		}
	case 'J':
		if s.Param(0, 0) >= 2 {
			return g.end()
		}
	}
	return nil
}

// end reports the line so far and starts another.
func (g *lineText) end() error {
	open := g.open
	line := strings.TrimRight(string(g.cells), " ")
	g.cells, g.col, g.open = g.cells[:0], 0, false
	if !open || line == "" {
		return nil
	}
	return g.emit(Hit{Offset: g.start, Time: g.at, Line: line})
}
