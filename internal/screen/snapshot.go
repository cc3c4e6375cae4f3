package screen

import (
	"strconv"
	"unicode/utf8"
)

// Snapshot returns a byte stream that, written into a terminal of the same
// size, reproduces the screen: it resets the terminal (ESC c), draws the
// last scrollback lines (at most scrollback of them, -1 for all) so that
// they scroll into the terminal's scrollback, then the screen, with every
// cell's characters, style and hyperlink; the normal screen beneath an
// alternate one; the scroll regions, tab stops and saved cursors; the
// modes, cursor style and visibility, title and working directory; and
// last the cursor. It sends no query a terminal would answer.
//
// Soft-wrapped lines arrive soft-wrapped (one more scrollback line than
// asked for is drawn when the first one continues the line above it).
// When the screen was fed part of an escape sequence or of a UTF-8
// character, the snapshot ends with it, so that the terminal reads the
// rest of the output as the screen does.
//
// xterm.js is the terminal it is exact for: a few cell states that only
// xterm.js's own fix-ups produce (erased cells in any style, the pending
// wrap) are recreated with those fix-ups.
func (s *Screen) Snapshot(scrollback int) []byte {
	return s.snapshot(scrollback, false)
}

// SnapshotKeep is Snapshot for a terminal that is to keep its scrollback:
// a terminal that has drawn the session's output up to some point and
// missed what came since (a viewer resynced after it fell behind). It does
// not reset the terminal, which would wipe its history: it leaves the
// alternate screen, resets the modes, tab stops and attributes one by
// one, erases the screen (with erases no terminal scrolls into its
// history, so the screen it replaces is not kept there twice) and
// draws the last scrollback lines (at most scrollback: those that scrolled
// away since the terminal's point) and the screen, so the history lines
// scroll into the terminal's history below what it had.
func (s *Screen) SnapshotKeep(scrollback int) []byte {
	return s.snapshot(scrollback, true)
}

// softReset returns a terminal that has a history to keep to what ESC c
// leaves, its buffers aside: the normal screen, DECSTR's defaults (cursor
// shown, no scroll region, insert and origin mode off, autowrap on,
// cursor keys and keypad normal, SGR 0, character sets, saved cursor),
// and the modes DECSTR leaves (mouse, focus, bracketed paste, reverse
// wrap, synchronized output, cursor style).
const softReset = "\x1b[?1049l\x1b[!p" +
	"\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1004l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l" +
	"\x1b[?2004l\x1b[?45l\x1b[?2026l\x1b[0 q\x1b[3g"

func (s *Screen) snapshot(scrollback int, keep bool) []byte {
	defer s.sb.release() // the history read cache
	w := &painter{s: s, x: 0}
	if keep {
		w.str(softReset)
		for x := 0; x < s.cols; x += 8 {
			w.csiFinal("H", 1, x+1)
			w.str("\x1bH")
		}
		// Erased as the top row, then the rest from the second: VTE
		// scrolls the screen into its history on ED 2, and tmux (its
		// scroll-on-clear) on ED 2 or ED 0 from home, where the screen
		// being replaced would stand above the lines drawn after it.
		w.str("\x1b[20l\x1b[H\x1b[2K")
		if s.rows > 1 {
			w.str("\x1b[2;1H\x1b[J\x1b[H")
		}
	} else {
		w.str("\x1bc\x1b[20l")
	}

	// The normal buffer: scrollback lines, then its screen.
	n := s.sb.len()
	start := s.sbStart(scrollback)
	first := start
	dummy := false
	firstWrapped := false
	if start < n {
		var l line
		if s.decodeLine(s.sb.line(start), s.cols, &l) == nil {
			firstWrapped = l.wrapped
		}
	} else if len(s.normal.lines) > 0 {
		firstWrapped = s.normal.lines[0].wrapped
	}
	if firstWrapped {
		if start > 0 {
			first = start - 1
		} else {
			dummy = true
		}
	}
	src := func(i int, l *line) {
		// i counts from the first line drawn (after any dummy).
		if k := first + i; k < n {
			if s.decodeLine(s.sb.line(k), s.cols, l) != nil {
				*l = line{cells: l.cells[:0]}
				l.cells = append(l.cells, make([]cell, s.cols)...)
				fillCells(l.cells, blankCell)
			}
			return
		}
		y := first + i - n
		src := &s.normal.lines[y]
		l.wrapped, l.marks = src.wrapped, src.marks
		l.cells = append(l.cells[:0], src.cells[:s.cols]...)
	}
	w.drawLines(n-first+s.rows, dummy, src)

	b := s.normal
	alt := s.cur == s.alt
	w.region(b)
	w.tabs(b)
	if !alt {
		w.savedCursor(b)
	} else {
		// ?1049h saves the cursor (the normal buffer's saved cursor) as it
		// switches: put the saved one in place first.
		w.placeSaved(b)
		w.str("\x1b[?1049h")
		w.gsetsDefault()
		w.setStyle(0)
		w.str("\x1b[H\x1b[2J")
		w.x = 0
		a := s.alt
		dummy := len(a.lines) > 0 && a.lines[0].wrapped
		w.drawLines(s.rows, dummy, func(i int, l *line) {
			src := &a.lines[i]
			l.wrapped, l.marks = src.wrapped, src.marks
			l.cells = append(l.cells[:0], src.cells[:s.cols]...)
		})
		w.region(a)
		w.tabs(a)
		w.savedCursor(a)
	}
	w.modes()
	w.printingModes()
	w.cursor()
	w.b = append(w.b, s.pendingInput()...)
	return w.b
}

// painter writes a snapshot, tracking the receiving terminal's style,
// hyperlink, column and join state as it goes.
type painter struct {
	s        *Screen
	b        []byte
	cur      style // the receiver's SGR attributes
	link     uint32
	x        int  // the receiver's cursor column
	joinable bool // the last thing written was a printed character
	designed bool // G0 was changed from US ASCII

	// The last style setStyle looked up, as it sends it: most cells share
	// their neighbour's.
	memoSID   uint32
	memoPlain style
	memoLink  uint32
	memoOK    bool
}

func (w *painter) str(v string) {
	w.b = append(w.b, v...)
	w.joinable = false
}

func (w *painter) csi(args ...int) []byte {
	w.b = append(w.b, "\x1b["...)
	for i, a := range args {
		if i > 0 {
			w.b = append(w.b, ';')
		}
		w.b = strconv.AppendInt(w.b, int64(a), 10)
	}
	w.joinable = false
	return w.b
}

func (w *painter) csiFinal(final string, args ...int) {
	w.csi(args...)
	w.b = append(w.b, final...)
}

// setStyle makes the receiver's attributes those of style sid, hyperlink
// included.
func (w *painter) setStyle(sid uint32) {
	if !w.memoOK || w.memoSID != sid {
		st := w.s.styles.get(sid).canonical()
		w.memoLink = st.link
		st.link = 0
		if st.bg&bgHasExt != 0 && st.ulStyle == 0 {
			st.bg &^= bgHasExt
		}
		w.memoSID, w.memoPlain, w.memoOK = sid, st, true
	}
	plain, link := w.memoPlain, w.memoLink
	cur := w.cur
	cur.link = 0
	if plain != cur {
		w.b = appendSGR(w.b, plain)
		if plain.bg&bgProtected != 0 {
			w.b = append(w.b, "\x1b[1\"q"...)
		}
		w.cur = plain
		w.joinable = false
	}
	if link != w.link {
		if link == 0 {
			w.b = append(w.b, "\x1b]8;;\x1b\\"...)
		} else {
			l := w.s.linkOf(style{link: link})
			w.b = append(w.b, "\x1b]8;"...)
			if l.id != "" {
				w.b = append(w.b, "id="...)
				w.b = append(w.b, l.id...)
			}
			w.b = append(w.b, ';')
			w.b = append(w.b, l.uri...)
			w.b = append(w.b, "\x1b\\"...)
		}
		w.link = link
		w.joinable = false
	}
}

// moveTo moves the receiver's cursor to column x of its row.
func (w *painter) moveTo(x int) {
	if w.x != x {
		w.csiFinal("G", x+1)
		w.x = x
	}
}

// put prints a cell's characters where the cursor is (what printable
// makes of them).
func (w *painter) put(c cell) {
	str := w.s.printable(c)
	wd := c.width()
	if r, _ := utf8.DecodeRuneInString(str); runeWidth(r) == 0 && w.joinable {
		// A zero-width character right after a printed one would join it:
		// ST in between (swallowed by the terminal) keeps it apart.
		w.str("\x1b\\")
	}
	w.b = append(w.b, str...)
	w.x += max(wd, 1)
	w.joinable = wd > 0
}

// standIn is printed for a cell whose character is wider than the cell.
// Only xterm.js's reflow leaves such a cell, when its copy of a row's
// strings puts a wide character's string on a narrow cell (see copyCells);
// no output makes one, since printing the character takes both its
// columns, and at the last column wraps the row first.
const standIn = "\ufffd"

// printable is what printing cell c sends: what takes the cell's place and
// no more, so that the cells after it stay where they are. That is its
// characters, except where they cannot make the cell again (see exactCell):
// a character wider than the cell is sent as the stand-in, and of a string
// of zero-width characters (joined to an erased cell) only the first goes,
// since with nothing to join each of them would take a column of its own.
func (s *Screen) printable(c cell) string {
	str := s.cellString(c)
	r, n := utf8.DecodeRuneInString(str)
	switch rw := runeWidth(r); {
	case rw > max(c.width(), 1):
		return standIn
	case rw == 0 && n < len(str):
		return str[:n]
	}
	return str
}

// wideFiller is printed where a wide character is needed for its side
// effects only; the cells it lands on are painted over.
const wideFiller = "\u4e00"

func (s *Screen) isEraseStyle(sid uint32) bool {
	st := s.styles.get(sid).canonical()
	return st == style{bg: st.bg & colorMask}
}

// drawLines draws count lines, one per row from the receiver's cursor row
// down (scrolling at the bottom), getting line i from get. With dummy a
// blank line goes first, so that the first line's wrap shows.
func (w *painter) drawLines(count int, dummy bool, get func(int, *line)) {
	s := w.s
	var cur, next line
	total := count
	fetch := func(i int, l *line) {
		if dummy {
			if i == 0 {
				l.cells = append(l.cells[:0], make([]cell, s.cols)...)
				fillCells(l.cells, blankCell)
				l.wrapped, l.marks = false, 0
				return
			}
			i--
		}
		get(i, l)
	}
	if dummy {
		total++
	}
	if total == 0 {
		return
	}
	fetch(0, &cur)
	for i := 0; i < total; i++ {
		nextWrapped := false
		if i+1 < total {
			fetch(i+1, &next)
			nextWrapped = next.wrapped
		}
		if cur.marks != 0 {
			w.marks(cur.marks)
		}
		w.paintRow(cur.cells, nextWrapped)
		if i+1 < total && !nextWrapped {
			w.setStyle(0)
			w.str("\r\n")
			w.x = 0
		}
		cur, next = next, cur
	}
}

func (w *painter) marks(m uint8) {
	for i, k := range "ABCD" {
		if m&(1<<i) != 0 {
			w.b = append(w.b, "\x1b]133;"...)
			w.b = append(w.b, byte(k))
			w.b = append(w.b, "\x1b\\"...)
		}
	}
	w.joinable = false
}

// paintRow paints one row of cells on a blank row with the cursor at its
// start. With nextWrapped it ends by wrapping onto the next row.
func (w *painter) paintRow(row []cell, nextWrapped bool) {
	s := w.s
	cols := s.cols
	end := cols
	for end > 0 && row[end-1].isBlank() {
		end--
	}
	dirty := -1 // a column a trick left a filler in
	for i := 0; i < end; {
		c := row[i]
		switch {
		case c.c&^cpMask == w1 && c.c&cpMask >= 0x20 && c.c&cpMask < 0x7f:
			// Printable ASCII, most cells: what the next case does for it,
			// without the questions only other characters raise.
			w.moveTo(i)
			w.setStyle(c.s)
			w.b = append(w.b, byte(c.c))
			w.x++
			w.joinable = true
			if dirty == i {
				dirty = -1
			}
			i++
		case c.hasContent():
			wd := c.width()
			if wd == 2 && i == cols-1 {
				i++
				continue
			}
			w.moveTo(i)
			w.setStyle(c.s)
			w.put(c)
			if r, _ := utf8.DecodeRuneInString(s.printable(c)); runeWidth(r) != wd {
				w.x = -1 // printed as another width: where the cursor is, is unknown
			}
			step := 1
			if wd == 2 && i+1 < cols && row[i+1] == (cell{s: c.s}) {
				step = 2
			}
			if dirty >= i && dirty < i+step {
				dirty = -1
			}
			i += step
		case c.width() == 0:
			// A continuation cell without its wide character.
			if !w.orphan(row, i) && dirty == i {
				w.eraseRun(i, 1, 0)
			}
			if dirty == i {
				dirty = -1
			}
			i++
		case c.s == 0:
			if dirty == i {
				w.eraseRun(i, 1, 0)
				dirty = -1
			}
			i++
		case s.isEraseStyle(c.s) && (i < cols-1 || !nextWrapped):
			j := i + 1
			for j < end && row[j] == c && (j < cols-1 || !nextWrapped) {
				j++
			}
			w.eraseRun(i, j-i, c.s)
			if dirty >= i && dirty < j {
				dirty = -1
			}
			i = j
		case i < cols-1:
			// An erased cell in a style erasing cannot give: print a wide
			// character on it, then a character on its second half, which
			// erases the first half in the current style.
			w.moveTo(i)
			w.put(cell{c: 0x4e00 | w2})
			w.moveTo(i + 1)
			w.setStyle(c.s)
			w.b = append(w.b, ' ')
			w.x = i + 2
			w.joinable = true
			dirty = i + 1
			i++
		case nextWrapped:
			// The wrap below makes this cell.
			i = end
		default:
			w.lastColumnNull(row, c)
			i++
		}
	}
	if dirty >= end && !(nextWrapped && dirty == cols-1) {
		w.eraseRun(dirty, 1, 0)
	}
	if nextWrapped {
		w.forceWrap(row, dirty == cols-1)
	}
}

// orphan makes column x a continuation cell without its wide character,
// the way xterm.js leaves one: a wide character two columns left of it,
// then a character inserted (ICH) into its second half shifts that half
// right; the two cells before x are painted again. It needs the cell
// before x to be an erased one, which it is when ICH made the orphan.
func (w *painter) orphan(row []cell, x int) bool {
	s := w.s
	if x < 2 || row[x-1].hasContent() || row[x-1].width() != 1 || row[x-2].width() == 2 {
		return false
	}
	w.moveTo(x - 2)
	w.setStyle(row[x].s) // the continuation keeps its wide character's style
	w.put(cell{c: 0x4e00 | w2})
	w.moveTo(x - 1)
	w.setStyle(0)
	w.csiFinal("@", 1)
	for _, i := range []int{x - 2, x - 1} {
		c := row[i]
		switch {
		case c.hasContent():
			w.moveTo(i)
			w.setStyle(c.s)
			w.put(c)
		case c.width() == 0 && i == x-2 && x >= 3 && row[x-3].width() == 2:
			w.moveTo(x - 3)
			w.setStyle(row[x-3].s)
			w.put(row[x-3])
		default:
			w.eraseRun(i, 1, s.styles.id(style{bg: s.styles.get(c.s).bg & colorMask}))
		}
	}
	return true
}

// eraseRun erases n cells from column x in the erase style sid.
func (w *painter) eraseRun(x, n int, sid uint32) {
	w.moveTo(x)
	w.setStyle(sid)
	w.csiFinal("X", n)
}

// lastColumnNull makes the last cell of a row an erased cell in a style
// erasing cannot give: a wide character is put in the last two columns and
// a character inserted (IRM) before it pushes its first half into the last
// column, where xterm.js erases it in the current style; then the
// second-last cell is painted again.
func (w *painter) lastColumnNull(row []cell, c cell) {
	s := w.s
	cols := s.cols
	prev := row[cols-2]
	// The second-last cell may be the second half of a wide character:
	// the trick breaks that character, which is then printed again.
	wideBefore := cols >= 4 && prev.width() == 0 && !prev.hasContent() && row[cols-3].width() == 2 && row[cols-3].hasContent()
	if cols < 3 || (prev.width() == 0 && !prev.hasContent() && !wideBefore) || (!prev.hasContent() && prev.width() != 0 && !prev.isBlank() && !s.isEraseStyle(prev.s)) {
		// Not possible here: approximate with the erase style.
		w.eraseRun(cols-1, 1, s.styles.id(style{bg: s.styles.get(c.s).bg & colorMask}))
		return
	}
	w.moveTo(cols - 2)
	w.put(cell{c: 0x4e00 | w2})
	w.moveTo(cols - 2)
	w.str("\x1b[4h")
	w.setStyle(c.s)
	w.b = append(w.b, 'X')
	w.x = cols - 1
	w.str("\x1b[4l")
	switch {
	case wideBefore:
		w.moveTo(cols - 3)
		w.setStyle(row[cols-3].s)
		w.put(row[cols-3])
	case prev.hasContent():
		w.moveTo(cols - 2)
		w.setStyle(prev.s)
		w.put(prev)
	default:
		w.eraseRun(cols-2, 1, prev.s)
	}
}

// forceWrap ends a row so that the next one is marked wrapped: from the
// pending-wrap state (or with the last cell erased, in its style) a wide
// character wraps; then the new row is erased.
func (w *painter) forceWrap(row []cell, lastDirty bool) {
	cols := w.s.cols
	if w.x != cols || lastDirty {
		last := row[cols-1]
		w.moveTo(cols - 1)
		w.setStyle(last.s)
	}
	w.b = append(w.b, wideFiller...)
	w.joinable = true
	w.setStyle(0)
	w.str("\r")
	w.x = 0
	w.csiFinal("X", cols)
}

// region sets a buffer's scroll region.
func (w *painter) region(b *buffer) {
	if b.top != 0 || b.bottom != w.s.rows-1 {
		w.csiFinal("r", b.top+1, b.bottom+1)
		w.x = 0
	}
}

// tabs sets a buffer's tab stops, when they are not the default ones.
func (w *painter) tabs(b *buffer) {
	cols := w.s.cols
	same := true
	for i := 0; i < cols; i++ {
		if b.tabAt(i) != (i%8 == 0) {
			same = false
			break
		}
	}
	if same {
		return
	}
	w.str("\x1b[3g")
	for i := 0; i < cols; i++ {
		if b.tabAt(i) {
			w.moveTo(i)
			w.str("\x1bH")
		}
	}
}

// placeSaved puts the cursor, attributes and character set where a
// buffer's saved cursor has them.
func (w *painter) placeSaved(b *buffer) {
	s := w.s
	yb := 0
	if b == s.normal {
		yb = s.sb.len()
	}
	y := min(max(b.savedY-yb, 0), s.rows-1)
	x := min(b.savedX, s.cols)
	w.csiFinal("H", y+1, min(x, s.cols-1)+1)
	w.x = min(x, s.cols-1)
	if x == s.cols {
		w.reprintLast(b, y)
	}
	w.setStyle(s.styles.id(style{fg: b.savedFg, bg: b.savedBg &^ bgHasExt}))
	if b.savedCharset != 0 {
		w.b = append(w.b, "\x1b("...)
		w.b = append(w.b, b.savedCharset)
		w.designed = true
	}
}

func (w *painter) savedCursor(b *buffer) {
	w.placeSaved(b)
	w.str("\x1b7")
	w.gsetsDefault()
}

func (w *painter) gsetsDefault() {
	if w.designed {
		w.str("\x1b(B")
		w.designed = false
	}
}

// reprintLast prints the last cell of the cursor's row (row y of the
// active buffer) again, leaving the cursor in the pending-wrap state.
// It reports whether it could.
func (w *painter) reprintLast(b *buffer, y int) bool {
	s := w.s
	row := b.lines[y].cells
	cols := s.cols
	c := row[cols-1]
	x := cols - 1
	if c.width() == 0 && !c.hasContent() && cols >= 2 && row[cols-2].width() == 2 {
		x, c = cols-2, row[cols-2]
	}
	if !c.hasContent() {
		return false
	}
	w.moveTo(x)
	w.setStyle(c.s)
	w.put(c)
	w.x = cols
	return true
}

func (w *painter) modes() {
	s := w.s
	m := s.modes
	flag := func(on bool, mode int) {
		if on {
			w.b = append(w.csi(), '?')
			w.b = strconv.AppendInt(w.b, int64(mode), 10)
			w.b = append(w.b, 'h')
		}
	}
	flag(m.appCursor, 1)
	if m.appKeypad {
		w.str("\x1b=")
	}
	flag(m.reverseWrap, 45)
	flag(m.focus, 1004)
	flag(m.mouse != mouseNone, [...]int{0, 9, 1000, 1002, 1003}[m.mouse])
	flag(m.mouseEnc == mouseEncSGR, 1006)
	flag(m.mouseEnc == mouseEncSGRPixels, 1016)
	flag(m.mouseUTF8, 1005)
	flag(m.mouseURXVT, 1015)
	flag(m.bracketedPaste, 2004)
	switch m.blinkOption {
	case 1:
		w.str("\x1b[?12h")
	case 2:
		w.str("\x1b[?12l")
	}
	if m.cursorStyle != 0 {
		ps := int(m.cursorStyle)
		if m.cursorBlink == 2 {
			ps++
		}
		w.csiFinal(" q", ps)
	}
	if m.hidden {
		w.str("\x1b[?25l")
	} else {
		w.str("\x1b[?25h")
	}
	w.b = append(w.b, "\x1b]1;"...)
	w.b = append(w.b, s.icon...)
	w.b = append(w.b, "\x1b\\\x1b]2;"...)
	w.b = append(w.b, s.title...)
	w.b = append(w.b, "\x1b\\"...)
	if s.cwdURI != "" {
		w.b = append(w.b, "\x1b]7;"...)
		w.b = append(w.b, s.cwdURI...)
		w.b = append(w.b, "\x1b\\"...)
	}
	flag(m.sync, 2026)
	if m.origin {
		w.str("\x1b[?6h")
	}
}

// cursor puts the cursor in place last, with the current attributes. Where
// the screen is in the middle of printing, it prints the last character
// again, so that a combining character that follows joins it; where the
// cursor waits to wrap, it prints the last cell again to get there.
func (w *painter) cursor() {
	s := w.s
	b := s.cur
	cols := s.cols
	curID := s.curID()
	if pw := int(s.prevWidth); pw > 0 && b.x >= pw && b.x <= cols {
		c := cellAt(b.lines[b.y].cells, b.x-pw)
		if c.hasContent() && c.width() == pw && c.s == curID {
			w.setStyle(curID)
			if w.reprint(b, b.x-pw, c) {
				return
			}
		}
		if pw == 2 && !s.modes.wrap && b.x == cols-1 && cellAt(b.lines[b.y].cells, b.x-1).width() != 2 {
			// The last thing printed was a wide character that did not
			// fit (and was dropped): drop another. (Not where a resize
			// left the cursor on the second half of a wide character:
			// the filler would erase it.)
			w.cup(b, b.x)
			w.setStyle(curID)
			w.b = append(w.b, wideFiller...)
			w.joinable = true
			return
		}
	}
	if b.x >= cols {
		row := b.lines[b.y].cells
		x, c := cols-1, row[cols-1]
		if c.width() == 0 && !c.hasContent() && row[cols-2].width() == 2 {
			x, c = cols-2, row[cols-2]
		}
		done := false
		if c.hasContent() {
			w.setStyle(c.s)
			done = w.reprint(b, x, c)
		} else if erased := row[0]; !erased.hasContent() && erased.width() == 1 && s.isEraseStyle(erased.s) {
			// A whole row erased while the cursor waited to wrap: print in
			// the last column, then erase the row, which keeps the cursor
			// there.
			same := true
			for _, c := range row[:cols] {
				same = same && c == erased
			}
			if same {
				w.cup(b, cols-1)
				w.b = append(w.b, 'X')
				w.setStyle(erased.s)
				w.str("\x1b[1K") // not 2K, which would unwrap the row
				done = true
			}
		}
		if done && b.x > cols {
			w.str("\x1b\\\u200b")
		}
		if !done {
			w.cup(b, cols-1)
		}
		w.setStyle(curID)
		return
	}
	w.cup(b, b.x)
	w.setStyle(curID)
}

func (w *painter) cup(b *buffer, x int) {
	y := b.y
	if w.s.modes.origin {
		y -= b.top
	}
	w.csiFinal("H", y+1, x+1)
	w.x = x
}

// reprint prints cell c, found at column x of the cursor's row, again at
// x, leaving the row as it was, with the receiver's final modes in effect:
// in insert mode the cell is first deleted, so that inserting it puts the
// row back; through a character set, the character that maps to it is
// printed. It reports whether it could.
func (w *painter) reprint(b *buffer, x int, c cell) bool {
	s := w.s
	str := s.printable(c)
	if str == "" {
		return false
	}
	r0, _ := utf8.DecodeRuneInString(str)
	if runeWidth(r0) != c.width() {
		// Printed, it would not make the cell again: a narrow character
		// on a wide cell leaves the cursor short of where it is, and a
		// zero-width one starts no cell to join (in insert mode the
		// deletion before it would pull the rest of the row over).
		return false
	}
	if s.charset != 0 && r0 < 127 && mapCharset(s.charset, r0) != r0 {
		return false
	}
	st := w.cur
	link := w.link
	w.cup(b, x)
	if s.modes.insert && c.width() > 0 {
		w.csiFinal("P", c.width())
	}
	w.cur, w.link = st, link
	w.b = append(w.b, str...)
	w.x = x + max(c.width(), 1)
	w.joinable = c.width() > 0
	return true
}

// printingModes sets what would have changed how the snapshot prints:
// insert mode, auto-wrap, the new-line mode and the character sets.
func (w *painter) printingModes() {
	s := w.s
	if s.modes.insert {
		w.str("\x1b[4h")
	}
	if s.modes.newline {
		w.str("\x1b[20h")
	}
	if !s.modes.wrap {
		w.str("\x1b[?7l")
	}
	for g, set := range s.gsets {
		if set != 0 {
			w.b = append(w.b, 0x1b, "()*+"[g], set)
			w.joinable = false
		}
	}
	switch s.glevel {
	case 1:
		w.str("\x0e")
	case 2:
		w.str("\x1bn")
	case 3:
		w.str("\x1bo")
	}
	if s.charset != s.gsets[s.glevel] && s.charset == s.cur.savedCharset {
		// The set in use is not the one designated for it: it came back
		// with the saved cursor (DECRC), and DECRC is the only way to get
		// it back. The cursor and attributes it restores are set next.
		w.str("\x1b8")
		w.cur = style{fg: ^uint32(0)}
		w.link = ^uint32(0)
	}
}

// pendingInput is what recreates the parser's state between Writes: the
// start of an unfinished escape sequence and of a UTF-8 character.
func (s *Screen) pendingInput() []byte {
	p := &s.p
	var b []byte
	switch p.state {
	case stEscape:
		b = append(b, 0x1b)
	case stEscInter:
		b = append(b, 0x1b)
		b = appendCollect(b, p.collect)
	case stCSIEntry, stCSIParam, stCSIInter:
		b = append(b, "\x1b["...)
		coll := appendCollect(nil, p.collect)
		if len(coll) > 0 && coll[0] >= 0x3c && coll[0] <= 0x3f {
			b = append(b, coll[0])
			coll = coll[1:]
		}
		if p.state != stCSIEntry {
			b = appendParams(b, &p.p)
		}
		b = append(b, coll...)
	case stCSIIgnore:
		b = append(b, "\x1b[0?"...)
	case stSOSPMAPC:
		b = append(b, "\x1b_"...)
	case stOSC:
		b = append(b, "\x1b]"...)
		switch p.osc {
		case oscID, oscPayload:
			if p.oscID >= 0 {
				b = strconv.AppendInt(b, int64(p.oscID), 10)
			}
			if p.osc == oscPayload {
				b = append(b, ';')
				if !p.oscLong {
					b = append(b, p.oscData...)
				}
			}
		case oscAbort:
			b = append(b, 'x')
		}
	case stDCSEntry:
		b = append(b, "\x1bP"...)
	case stDCSParam:
		b = append(b, "\x1bP0"...)
	case stDCSInter:
		b = append(b, "\x1bP!"...)
	case stDCSIgnore:
		b = append(b, "\x1bP0?"...)
	case stDCSPass:
		b = append(b, "\x1bPz"...)
	}
	return append(b, p.utf8[:p.utf8n]...)
}

// appendCollect appends the collected prefix and intermediate bytes, in
// the order they came.
func appendCollect(b []byte, collect uint32) []byte {
	var tmp [4]byte
	n := 0
	for c := collect; c != 0 && n < 4; c >>= 8 {
		tmp[n] = byte(c)
		n++
	}
	for i := n - 1; i >= 0; i-- {
		b = append(b, tmp[i])
	}
	return b
}

// appendParams appends parameters that parse back to p (0 is written as
// nothing, which is the same).
func appendParams(b []byte, p *params) []byte {
	for i := 0; i < p.n; i++ {
		if i > 0 {
			b = append(b, ';')
		}
		if v := p.v[i]; v != 0 {
			b = strconv.AppendInt(b, int64(v), 10)
		}
		for _, sv := range p.subs(i) {
			b = append(b, ':')
			if sv >= 0 {
				b = strconv.AppendInt(b, int64(sv), 10)
			}
		}
	}
	return b
}

// exactCell reports whether a snapshot recreates cell x of a row exactly
// in xterm.js. The cells it cannot are ones only xterm.js's own corner
// cases make, and no byte stream written into a terminal of the same size
// makes again: a cell whose width is not its character's (a combining
// mark joined to an erased cell after a resize; a character joined to a
// wide one that did not fit; a string the reflow moved onto a cell of
// another width), which the painter sends so that it takes only the
// cell's place (see printable), a wide character in the last column or
// without its continuation, a continuation without its wide character
// after a cell that is not erased, and erased cells in a style erasing
// cannot give in the few places the painter's tricks cannot reach.
func (s *Screen) exactCell(row []cell, x int, nextWrapped bool) bool {
	cols := s.cols
	c := row[x]
	fancy := func(c cell) bool { return !c.hasContent() && c.width() == 1 && c.s != 0 && !s.isEraseStyle(c.s) }
	orphanAt := func(i int) bool {
		if i >= cols {
			return false
		}
		o := row[i]
		return o.width() == 0 && !o.hasContent() && !(i > 0 && row[i-1].width() == 2 && row[i-1].hasContent())
	}
	if x > 0 && row[x-1].width() == 2 && row[x-1].hasContent() {
		// The second half of a wide character, or a cell over it.
		return c == cell{s: row[x-1].s} && s.exactCell(row, x-1, nextWrapped)
	}
	switch {
	case c.hasContent():
		r0, _ := utf8.DecodeRuneInString(s.cellString(c))
		if c.width() != runeWidth(r0) {
			return false
		}
		if c.width() == 2 {
			return x < cols-1 && row[x+1] == cell{s: c.s}
		}
		return true
	case c.width() == 0:
		return x >= 2 && row[x-1].width() == 1 && !row[x-1].hasContent() && row[x-2].width() != 2
	case fancy(c):
		if orphanAt(x+1) || orphanAt(x+2) {
			return false
		}
		if x < cols-1 || nextWrapped {
			return true
		}
		prev := row[cols-2]
		if prev.width() == 0 && !prev.hasContent() {
			return cols >= 4 && row[cols-3].width() == 2 && row[cols-3].hasContent()
		}
		return cols >= 3 && (prev.hasContent() || prev.isBlank() || s.isEraseStyle(prev.s))
	}
	return true
}
