package screen

// Controls, ESC sequences and the cursor and scrolling operations they and
// CSI sequences share. Each follows xterm.js's InputHandler, including its
// departures from a VT: relative cursor moves in origin mode offset by the
// scroll region's top, the saved cursor's row counts from the top of the
// scrollback, a line feed in the pending-wrap state steps the cursor back
// into the last column.

func (s *Screen) execute(b byte) {
	switch b {
	case 0x0a, 0x0b, 0x0c:
		s.lineFeed()
	case 0x0d:
		s.cur.x = 0
	default:
		s.leave()
		s.executeOther(b)
		s.back()
	}
	s.prevWidth = 0
}

// executeOther is execute of a control other than a line feed or a
// carriage return.
func (s *Screen) executeOther(b byte) {
	switch b {
	case 0x08:
		s.backspace()
	case 0x09:
		s.tab()
	case 0x0e:
		s.setGLevel(1)
	case 0x0f:
		s.setGLevel(0)
	case 0x84:
		s.index()
	case 0x85:
		s.cur.x = 0
		s.index()
	case 0x88:
		s.cur.setTab(s.cur.x)
	}
}

func (s *Screen) escDispatch(id uint32) {
	switch id {
	case '7':
		s.saveCursor()
	case '8':
		s.restoreCursor()
	case 'D':
		s.index()
	case 'E':
		s.cur.x = 0
		s.index()
	case 'H':
		s.cur.setTab(s.cur.x)
	case 'M':
		s.reverseIndex()
	case '=':
		s.modes.appKeypad = true
	case '>':
		s.modes.appKeypad = false
	case 'c':
		s.fullReset()
	case 'n', '}':
		s.setGLevel(2)
	case 'o', '|':
		s.setGLevel(3)
	case '~':
		s.setGLevel(1)
	case '%'<<8 | '@', '%'<<8 | 'G':
		s.setGLevel(0)
		s.setGCharset(0, 0)
	case '#'<<8 | '8':
		s.alignmentPattern()
	default:
		if id>>16 != 0 || id < 0x100 {
			return
		}
		g, f := byte(id>>8), byte(id)
		if !validCharset(f) {
			return
		}
		level := -1
		switch g {
		case '(':
			level = 0
		case ')', '-':
			level = 1
		case '*', '.':
			level = 2
		case '+':
			level = 3
		}
		if level < 0 {
			return
		}
		if f == 'B' {
			f = 0
		}
		s.setGCharset(level, f)
	}
}

func (s *Screen) setGLevel(g uint8) {
	s.glevel = g
	s.charset = s.gsets[g]
}

func (s *Screen) setGCharset(g int, set byte) {
	s.gsets[g] = set
	if int(s.glevel) == g {
		s.charset = set
	}
}

// restrict clamps the cursor to the screen, or to the scroll region in
// origin mode; x may be at most maxCol.
func (s *Screen) restrict(maxCol int) {
	b := s.cur
	b.x = min(maxCol, max(0, b.x))
	if s.modes.origin {
		b.y = min(b.bottom, max(b.top, b.y))
	} else {
		b.y = min(s.rows-1, max(0, b.y))
	}
}

func (s *Screen) setCursor(x, y int) {
	b := s.cur
	b.x = x
	if s.modes.origin {
		b.y = b.top + y
	} else {
		b.y = y
	}
	s.restrict(s.cols - 1)
}

func (s *Screen) moveCursor(dx, dy int) {
	s.restrict(s.cols - 1)
	s.setCursor(s.cur.x+dx, s.cur.y+dy)
}

func (s *Screen) lineFeed() {
	b := s.cur
	if s.modes.newline {
		b.x = 0
	}
	b.y++
	switch {
	case b.y == b.bottom+1:
		b.y--
		s.scroll(false)
	case b.y >= s.rows:
		b.y = s.rows - 1
	default:
		b.lines[b.y].wrapped = false
	}
	if b.x >= s.cols {
		b.x--
	}
}

func (s *Screen) index() {
	b := s.cur
	s.restrict(s.cols - 1)
	b.y++
	if b.y == b.bottom+1 {
		b.y--
		s.scroll(false)
	} else if b.y >= s.rows {
		b.y = s.rows - 1
	}
	s.restrict(s.cols - 1)
}

func (s *Screen) reverseIndex() {
	b := s.cur
	s.restrict(s.cols - 1)
	if b.y != b.top {
		b.y--
		s.restrict(s.cols - 1)
		return
	}
	l := b.lines[b.bottom]
	copy(b.lines[b.top+1:b.bottom+1], b.lines[b.top:b.bottom])
	s.recycle(&l, s.eraseID())
	b.lines[b.top] = l
}

func (s *Screen) backspace() {
	b := s.cur
	if !s.modes.reverseWrap {
		s.restrict(s.cols - 1)
		if b.x > 0 {
			b.x--
		}
		return
	}
	s.restrict(s.cols)
	if b.x > 0 {
		b.x--
	} else if b.y > b.top && b.y <= b.bottom && b.lines[b.y].wrapped {
		b.lines[b.y].wrapped = false
		b.y--
		b.x = s.cols - 1
		c := cellAt(b.lines[b.y].cells, b.x)
		if c.width() != 0 && !c.hasContent() {
			b.x--
		}
	}
	s.restrict(s.cols - 1)
}

func (s *Screen) tab() {
	b := s.cur
	if b.x >= s.cols {
		return
	}
	b.x = b.nextStop(b.x, s.cols)
}

// scroll moves the scroll region up a line: its top line goes to the
// scrollback when the region starts at the top of the normal buffer, and a
// blank line in the erase style (wrapped if the scroll comes from
// auto-wrap) enters at its bottom.
func (s *Screen) scroll(wrapped bool) {
	b := s.cur
	l := b.lines[b.top]
	sid := s.eraseID()
	if b.top == 0 {
		if b == s.normal {
			end := s.pushScrollback(&b.lines[0])
			if sid == 0 && end < len(l.cells) && len(l.cells) == s.cols {
				// Past end the row is blank already: erase only the rest.
				fillCells(l.cells[:end], blankCell)
				l.wrapped, l.marks = wrapped, 0
				s.knownBlank(&l, 0)
				b.rollUp(b.top, b.bottom, l)
				return
			}
		} else if b.maxLen > s.rows {
			// The line goes to the alternate buffer's hidden lines; the
			// oldest of them drops when they are full.
			b.hidden = append(b.hidden, l)
			if len(b.hidden) > b.maxLen-s.rows {
				b.hidden[0] = line{}
				b.hidden = b.hidden[1:]
			}
			l = line{}
		}
	}
	s.recycle(&l, sid)
	l.wrapped = wrapped
	b.rollUp(b.top, b.bottom, l)
}

// pushScrollback packs a row into the scrollback and returns the row's
// length without its trailing blank cells (its whole length when there is
// no scrollback).
func (s *Screen) pushScrollback(l *line) int {
	if s.sb.maxLines <= 0 {
		return len(l.cells)
	}
	var end int
	s.encBuf, end = s.encodeLineEnd(s.encBuf[:0], l)
	s.sb.push(s.encBuf)
	s.scrolled++
	if cap(s.encBuf) > 64<<10 {
		s.encBuf = nil
	}
	return end
}

// recycle turns l into a blank row of the screen's width in style sid,
// reusing its cells when they are big enough.
func (s *Screen) recycle(l *line, sid uint32) {
	if cap(l.cells) >= s.cols {
		l.cells = l.cells[:s.cols]
	} else {
		l.cells = make([]cell, s.cols)
	}
	fillCells(l.cells, cell{c: w1, s: sid})
	l.wrapped = false
	l.marks = 0
	if sid == 0 {
		s.knownBlank(l, 0)
	} else {
		s.knownBlank(l, len(l.cells))
	}
}

func (s *Screen) saveCursor() {
	b := s.cur
	b.savedX = b.x
	b.savedY = s.ybase() + b.y
	b.savedFg, b.savedBg = s.attr.fg, s.attr.bg
	b.savedCharset = s.charset
}

func (s *Screen) restoreCursor() {
	b := s.cur
	b.x = b.savedX
	b.y = max(b.savedY-s.ybase(), 0)
	s.attr.fg, s.attr.bg = b.savedFg, b.savedBg
	s.attrOK = false
	s.charset = b.savedCharset
	s.restrict(s.cols - 1)
}

// fullReset is RIS (ESC c). Like xterm.js it keeps the title, the hidden
// cursor and the options that escape sequences set (LNM, ?12).
func (s *Screen) fullReset() {
	s.p.reset()
	s.setAttr(style{})
	s.resetBuffers()
	s.gsets = [4]byte{}
	s.glevel, s.charset = 0, 0
	m := s.modes
	s.modes = modes{wrap: true, hidden: m.hidden, newline: m.newline, blinkOption: m.blinkOption}
	s.prevWidth = 0
}

// softReset is DECSTR (CSI ! p).
func (s *Screen) softReset() {
	b := s.cur
	s.modes.hidden = false
	b.top, b.bottom = 0, s.rows-1
	s.setAttr(style{})
	m := s.modes
	s.modes = modes{wrap: true, newline: m.newline, blinkOption: m.blinkOption,
		mouse: m.mouse, mouseEnc: m.mouseEnc, mouseUTF8: m.mouseUTF8, mouseURXVT: m.mouseURXVT}
	s.gsets = [4]byte{}
	s.glevel, s.charset = 0, 0
	b.savedX = 0
	b.savedY = s.ybase()
	b.savedFg, b.savedBg = 0, 0
	b.savedCharset = 0
}

// alignmentPattern is DECALN (ESC # 8): the screen filled with E, from the
// cursor's home row down.
func (s *Screen) alignmentPattern() {
	b := s.cur
	sid := s.styles.id(style{fg: s.attr.fg, bg: s.attr.bg})
	s.setCursor(0, 0)
	for y := b.y; y < s.rows; y++ {
		fillCells(b.lines[y].cells, cell{c: 'E' | w1, s: sid})
		b.lines[y].wrapped = false
	}
	s.setCursor(0, 0)
}

func (s *Screen) activateAlt() {
	if s.cur == s.alt {
		return
	}
	a := s.alt
	if len(a.lines) == 0 {
		a.lines = s.blankLines(s.rows, s.eraseID())
	}
	a.x, a.y = s.normal.x, s.normal.y
	s.cur = a
}

func (s *Screen) activateNormal() {
	if s.cur == s.normal {
		return
	}
	a := s.alt
	s.normal.x, s.normal.y = a.x, a.y
	a.lines, a.base = nil, nil
	a.hidden = nil
	a.maxLen = s.rows
	a.x, a.y = 0, 0
	a.top, a.bottom = 0, s.rows-1
	a.setupTabs(s.cols)
	s.cur = s.normal
}

// Tab stops are a bit set over columns. xterm.js keeps stops past the
// right margin when the screen narrows, and they count again if it
// widens.

func (b *buffer) tabAt(i int) bool {
	if i < 0 || i/64 >= len(b.tabs) {
		return false
	}
	return b.tabs[i/64]&(1<<(i%64)) != 0
}

func (b *buffer) setTab(i int) {
	if i < 0 {
		return
	}
	for i/64 >= len(b.tabs) {
		b.tabs = append(b.tabs, 0)
	}
	b.tabs[i/64] |= 1 << (i % 64)
}

func (b *buffer) clearTab(i int) {
	if i >= 0 && i/64 < len(b.tabs) {
		b.tabs[i/64] &^= 1 << (i % 64)
	}
}

// setupTabs sets a stop every 8 columns and no other.
func (b *buffer) setupTabs(cols int) {
	b.tabs = b.tabs[:0]
	for i := 0; i < cols; i += 8 {
		b.setTab(i)
	}
}

// extendTabs is xterm.js's setupTabStops(cols) after a resize: stops every
// 8 columns onward from the last stop before cols.
func (b *buffer) extendTabs(cols int) {
	i := cols
	if !b.tabAt(i) {
		i = b.prevStop(i, cols)
	}
	for ; i < cols; i += 8 {
		b.setTab(i)
	}
}

func (b *buffer) nextStop(x, cols int) int {
	for {
		x++
		if b.tabAt(x) || x >= cols {
			break
		}
	}
	return clampStop(x, cols)
}

func (b *buffer) prevStop(x, cols int) int {
	for {
		x--
		if b.tabAt(x) || x <= 0 {
			break
		}
	}
	return clampStop(x, cols)
}

func clampStop(x, cols int) int {
	if x >= cols {
		return cols - 1
	}
	if x < 0 {
		return 0
	}
	return x
}
