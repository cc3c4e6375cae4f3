package export

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"termkeep/internal/outlog"
	"termkeep/internal/vtscan"
)

// Hit is a line Grep found, and where in the log its first match was drawn.
type Hit struct {
	// Offset and End bound the bytes that drew the match's characters
	// [Offset, End): a screen after End shows the whole match. For a
	// match of blanks only, drawn by no byte, the line's first byte.
	Offset, End uint64
	// Shown is the end of the log's chunk that holds the match's last
	// byte: the first moment after End that a terminal showed, since each
	// chunk is what one read of the terminal gave (a screen at End itself
	// may cut a chunk, as no terminal ever did: "MARKER" of
	// "MARKER-alpha\r\n" alone).
	Shown uint64
	// Time is when the last of those bytes was logged (zero when the log
	// does not say): when the match was on the screen whole, not when its
	// line began (a prompt may precede its command by hours).
	Time time.Time
	Line string // the whole line's text
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
	g := &lineText{emit: func(line string, cells []drawnCell, start uint64, at time.Time) error {
		if line == "" {
			return nil
		}
		m := re.FindStringIndex(line)
		if m == nil {
			return nil
		}
		return fn(matchHit(line, cells, m[0], m[1], start, at))
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

// matchHit is the hit for the match line[lo:hi] (byte indexes) of a line
// whose characters are cells (one a character), begun at start at time
// at: the bytes that drew its characters, and when the last of them came.
func matchHit(line string, cells []drawnCell, lo, hi int, start uint64, at time.Time) Hit {
	h := Hit{Line: line, Offset: start, End: start, Shown: start, Time: at}
	found := false
	i := 0 // cell index of the character at byte b
	for b := range line {
		if b >= hi {
			break
		}
		if b >= lo && i < len(cells) && cells[i].end > 0 {
			c := cells[i]
			if !found || c.off < h.Offset {
				h.Offset = c.off
			}
			if !found || c.end > h.End {
				h.End, h.Shown, h.Time = c.end, c.shown, c.at
			}
			found = true
		}
		i++
	}
	return h
}

// drawnCell is a character of a line and the bytes that drew it, [off, end),
// logged at at; end 0: drawn by none (padding, an erased character).
type drawnCell struct {
	r        rune
	off, end uint64
	shown    uint64 // the end of the chunk the character was completed in
	at       time.Time
}

// lineText renders a byte stream into lines of text.
type lineText struct {
	emit  func(line string, cells []drawnCell, start uint64, at time.Time) error
	cells []drawnCell
	col   int
	open  bool // a line has begun
	start uint64
	at    time.Time
	seq   vtscan.Scanner
	u     [utf8.UTFMax]byte // an incomplete UTF-8 character
	un    int
	// The byte being read (its offset and time), and where the
	// character in u began.
	off, uoff uint64
	now       time.Time
	chunkEnd  uint64 // the end of the chunk being read
}

func (g *lineText) feed(off uint64, at time.Time, p []byte) error {
	g.now, g.chunkEnd = at, off+uint64(len(p))
	for i, b := range p {
		g.off = off + uint64(i)
		if !g.open {
			g.open, g.start, g.at = true, g.off, at
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
		if g.un == 0 {
			g.uoff = g.off
		}
		g.u[g.un] = b
		g.un++
		g.flushRune(false)
		return nil
	}
	g.flushRune(true)
	g.uoff = g.off
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
			g.put(rune(b), g.off, g.off+1)
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
		off := g.uoff
		g.uoff += uint64(n)
		g.put(r, off, g.uoff)
	}
}

// put writes r, drawn by the bytes [off, end), at the cursor; past
// maxLineCols, nothing is kept.
func (g *lineText) put(r rune, off, end uint64) {
	if g.col >= maxLineCols {
		return
	}
	for len(g.cells) <= g.col {
		g.cells = append(g.cells, drawnCell{r: ' '})
	}
	g.cells[g.col] = drawnCell{r: r, off: off, end: end, shown: g.chunkEnd, at: g.now}
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
				g.cells[i] = drawnCell{r: ' '}
			}
		case 2:
			g.cells = g.cells[:0]
		}
	case 'X': // erase characters
		for i := g.col; i < g.col+s.Param(0, 1) && i < len(g.cells); i++ {
			g.cells[i] = drawnCell{r: ' '}
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
	n := len(g.cells)
	for n > 0 && g.cells[n-1].r == ' ' {
		n--
	}
	var b strings.Builder
	for _, c := range g.cells[:n] {
		b.WriteRune(c.r)
	}
	cells := g.cells[:n]
	g.col, g.open = 0, false
	defer func() { g.cells = g.cells[:0] }()
	if !open || n == 0 {
		return nil
	}
	return g.emit(b.String(), cells, g.start, g.at)
}
