package screen

import "fmt"

// A cell is 8 bytes: its content word and an index into the screen's style
// table. The content word holds, as xterm.js's buffer does, a code point (or,
// with combFlag, an index into the screen's table of multi-code-point
// strings) and the cell's width: 1, 2 for the first half of a wide character,
// 0 for the second half (a continuation, with no content) or for a
// zero-width character that xterm.js did not join to the cell before it.
//
// Code point 0 is an erased ("null") cell. It renders as a blank like a
// space, but it is not content: xterm.js trims it when it reflows lines and
// treats it differently in a few print fix-ups, so the model keeps the
// difference too.
type cell struct {
	c uint32
	s uint32
}

const (
	cpMask      = 0x1FFFFF
	combFlag    = 1 << 21
	contentMask = cpMask | combFlag
	wShift      = 22
	w1          = 1 << wShift
	w2          = 2 << wShift
)

// blankCell is an erased cell in the default style.
var blankCell = cell{c: w1}

func (c cell) width() int       { return int(c.c >> wShift) }
func (c cell) hasContent() bool { return c.c&contentMask != 0 }

// isBlank reports a cell that is trimmed from the end of a stored line: an
// erased cell of width 1 in the default style.
func (c cell) isBlank() bool { return c == blankCell }

func mkcell(cp rune, w int, sid uint32) cell {
	return cell{c: uint32(cp) | uint32(w)<<wShift, s: sid}
}

// line is one row of a buffer. Its cells number the screen's columns,
// except in the alternate buffer after a narrowing resize, where xterm.js
// keeps the longer rows (the hidden cells come back if it widens again).
type line struct {
	cells   []cell
	wrapped bool  // reached by auto-wrap from the row above (xterm.js isWrapped)
	marks   uint8 // OSC 133 marks received on this row (markPrompt...)
	// While epoch is the screen's (Screen.epoch), the cells from blankFrom
	// on are known to be blank (see Screen.contentEnd).
	blankFrom int32
	epoch     uint64
}

// OSC 133 (shell integration) marks, kept per row.
const (
	markPrompt  = 1 << iota // A: prompt starts
	markCommand             // B: command input starts
	markOutput              // C: command output starts
	markDone                // D: command finished
)

// The helpers below are xterm.js's BufferLine operations on a row of
// cells. Indexes past the end of the row read as zero and writes there are
// dropped, as they are on xterm.js's typed arrays.

func cellAt(row []cell, i int) cell {
	if i < 0 || i >= len(row) {
		return cell{}
	}
	return row[i]
}

func setAt(row []cell, i int, c cell) {
	if i >= 0 && i < len(row) {
		row[i] = c
	}
}

func fillCells(row []cell, c cell) {
	if c == blankCell && len(row) > 8 {
		// A scroll erases the row it recycles: copying blank cells moves
		// wide words, the loop a cell at a time.
		for len(row) > 0 {
			row = row[copy(row, blankRow[:]):]
		}
		return
	}
	for i := range row {
		row[i] = c
	}
}

// blankRow is a run of blank cells to erase rows with.
var blankRow = func() (r [256]cell) {
	for i := range r {
		r[i] = blankCell
	}
	return r
}()

// insertCells shifts the cells from pos right by n, filling the gap with
// fill; the cells pushed past the end are lost.
func insertCells(row []cell, pos, n int, fill cell) {
	length := len(row)
	if length == 0 {
		return
	}
	pos %= length
	if pos > 0 && row[pos-1].width() == 2 {
		row[pos-1] = cell{c: w1, s: fill.s}
	}
	if n < length-pos {
		copy(row[pos+n:], row[pos:length-n])
		for i := 0; i < n; i++ {
			row[pos+i] = fill
		}
	} else {
		for i := pos; i < length; i++ {
			row[i] = fill
		}
	}
	if row[length-1].width() == 2 {
		row[length-1] = cell{c: w1, s: fill.s}
	}
}

// deleteCells removes n cells at pos, shifting the rest left and filling
// the end with fill.
func deleteCells(row []cell, pos, n int, fill cell) {
	length := len(row)
	if length == 0 {
		return
	}
	pos %= length
	if n < length-pos {
		copy(row[pos:], row[pos+n:])
		for i := length - n; i < length; i++ {
			row[i] = fill
		}
	} else {
		for i := pos; i < length; i++ {
			row[i] = fill
		}
	}
	if pos > 0 && row[pos-1].width() == 2 {
		row[pos-1] = cell{c: w1, s: fill.s}
	}
	if row[pos].width() == 0 && !row[pos].hasContent() {
		row[pos] = cell{c: w1, s: fill.s}
	}
}

// replaceCells fills [start, end) with fill. With respectProtect, cells
// whose style is protected (DECSCA) are kept.
func replaceCells(row []cell, start, end int, fill cell, respectProtect bool, prot func(cell) bool) {
	length := len(row)
	if respectProtect {
		if start > 0 && start-1 < length && row[start-1].width() == 2 && !prot(row[start-1]) {
			row[start-1] = cell{c: w1, s: fill.s}
		}
		if end < length && end > 0 && row[end-1].width() == 2 && !prot(cellAt(row, end)) {
			row[end] = cell{c: w1, s: fill.s}
		}
		for ; start < end && start < length; start++ {
			if start >= 0 && !prot(row[start]) {
				row[start] = fill
			}
		}
		return
	}
	if start > 0 && start-1 < length && row[start-1].width() == 2 {
		row[start-1] = cell{c: w1, s: fill.s}
	}
	if end < length && end > 0 && row[end-1].width() == 2 {
		row[end] = cell{c: w1, s: fill.s}
	}
	if start < 0 {
		start = 0
	}
	for ; start < end && start < length; start++ {
		row[start] = fill
	}
}

// trimmedLength is the index after the last cell with content, counting
// that cell's width (xterm.js getTrimmedLength).
func trimmedLength(row []cell) int {
	for i := len(row) - 1; i >= 0; i-- {
		if row[i].hasContent() {
			return i + row[i].width()
		}
	}
	return 0
}

// Packing a row that scrolls into the history trims its trailing blank
// cells, and on a wide screen that scan was most of the packing. A row
// that plain output scrolls through knows where its blank cells start
// instead: scrolling blanks it, and printing raises the mark as it
// writes (the fast paths: printASCII, the erase at auto-wrap, the fix-ups
// at the ends of a run). Everything else that writes cells (any other
// control, escape sequence or character, a resize, a checkpoint read)
// runs between leave and back, whose new epochs make every mark unknown:
// nothing else has to keep them right, and one that is not known costs
// the scan it always did.

// leave starts an operation that writes cells without keeping the marks.
func (s *Screen) leave() {
	s.epoch++
	s.untracked++
}

// back ends what leave started.
func (s *Screen) back() {
	s.epoch++
	s.untracked--
}

// knownBlank records that l's cells from x on are blank, outside leave
// and back (inside, whatever l knew is already of a past epoch).
func (s *Screen) knownBlank(l *line, x int) {
	if s.untracked == 0 {
		l.blankFrom, l.epoch = int32(x), s.epoch
	}
}

// wrote keeps l's mark after a write of its cells before end.
func (s *Screen) wrote(l *line, end int) {
	if l.epoch == s.epoch && int32(end) > l.blankFrom {
		l.blankFrom = int32(end)
	}
}

// contentEnd is where l's trailing blank cells start at the latest: its
// mark when it is known, else its length.
func (s *Screen) contentEnd(l *line) int {
	if l.epoch == 0 || l.epoch != s.epoch || int(l.blankFrom) >= len(l.cells) {
		return len(l.cells)
	}
	if verifyMarks {
		for i, c := range l.cells[l.blankFrom:] {
			if !c.isBlank() {
				panic(fmt.Sprintf("screen: a row's blank cells start at %d by its mark, but cell %d is %#v", l.blankFrom, int(l.blankFrom)+i, c))
			}
		}
	}
	return int(l.blankFrom)
}

// verifyMarks makes contentEnd check each mark it uses (the package's
// tests set it).
var verifyMarks = false
