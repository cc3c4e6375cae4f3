package screen

// CSI identifiers: prefix and intermediate bytes, then the final byte.
const (
	csiPriv  = '?' << 8
	csiSpace = ' ' << 8
)

func (s *Screen) csiDispatch(id uint32) {
	p := &s.p.p
	b := s.cur
	switch id {
	case '@':
		s.restrict(s.cols - 1)
		insertCells(b.lines[b.y].cells, b.x, p.or1(0), cell{c: w1, s: s.eraseID()})
	case csiSpace | '@':
		s.shiftColumns(p.or1(0), false, true)
	case 'A':
		s.cursorUp(p.or1(0))
	case csiSpace | 'A':
		s.shiftColumns(p.or1(0), true, true)
	case 'B':
		s.cursorDown(p.or1(0))
	case 'C', 'a':
		s.moveCursor(p.or1(0), 0)
	case 'D':
		s.moveCursor(-p.or1(0), 0)
	case 'E':
		s.cursorDown(p.or1(0))
		b.x = 0
	case 'F':
		s.cursorUp(p.or1(0))
		b.x = 0
	case 'G', '`':
		s.setCursor(p.or1(0)-1, b.y)
	case 'H', 'f':
		x := 0
		if p.n >= 2 {
			x = p.or1(1) - 1
		}
		s.setCursor(x, p.or1(0)-1)
	case 'I':
		if b.x < s.cols {
			for n := p.or1(0); n > 0; n-- {
				x := b.nextStop(b.x, s.cols)
				if x == b.x {
					break
				}
				b.x = x
			}
		}
	case 'J':
		s.eraseInDisplay(p.get(0), false)
	case csiPriv | 'J':
		s.eraseInDisplay(p.get(0), true)
	case 'K':
		s.eraseInLine(p.get(0), false)
	case csiPriv | 'K':
		s.eraseInLine(p.get(0), true)
	case 'L':
		s.insertLines(p.or1(0))
	case 'M':
		s.deleteLines(p.or1(0))
	case 'P':
		s.restrict(s.cols - 1)
		deleteCells(b.lines[b.y].cells, b.x, p.or1(0), cell{c: w1, s: s.eraseID()})
	case 'S':
		s.scrollUp(p.or1(0))
	case 'T':
		s.scrollDown(p.or1(0))
	case 'X':
		s.restrict(s.cols - 1)
		replaceCells(b.lines[b.y].cells, b.x, b.x+p.or1(0), cell{c: w1, s: s.eraseID()}, false, nil)
	case 'Z':
		if b.x < s.cols {
			for n := p.or1(0); n > 0; n-- {
				x := b.prevStop(b.x, s.cols)
				if x == b.x {
					break
				}
				b.x = x
			}
		}
	case 'b':
		s.repeatPreceding(p.or1(0))
	case 'd':
		s.setCursor(b.x, p.or1(0)-1)
	case 'e':
		s.moveCursor(0, p.or1(0))
	case 'g':
		switch p.get(0) {
		case 0:
			b.clearTab(b.x)
		case 3:
			b.tabs = b.tabs[:0]
		}
	case 'h':
		s.setMode(true)
	case csiPriv | 'h':
		s.setPrivateMode(true)
	case 'l':
		s.setMode(false)
	case csiPriv | 'l':
		s.setPrivateMode(false)
	case 'm':
		s.sgr()
	case '!'<<8 | 'p':
		s.softReset()
	case csiSpace | 'q':
		s.setCursorStyle(p.get(0))
	case 'r':
		top := p.or1(0)
		bottom := p.get(1)
		if p.n < 2 || bottom > s.rows || bottom == 0 {
			bottom = s.rows
		}
		if bottom > top {
			b.top, b.bottom = top-1, bottom-1
			s.setCursor(0, 0)
		}
	case 's':
		s.saveCursor()
	case 'u':
		s.restoreCursor()
	case '\''<<8 | '}':
		s.shiftColumns(p.or1(0), true, false)
	case '\''<<8 | '~':
		s.shiftColumns(p.or1(0), false, false)
	case '"'<<8 | 'q':
		switch p.get(0) {
		case 1:
			s.attr.bg |= bgProtected
			s.attrOK = false
		case 0, 2:
			s.attr.bg &^= bgProtected
			s.attrOK = false
		}
	}
	// Not handled, as in xterm.js with its default options: device and
	// mode queries (which only answer), window operations (CSI t).
}

func (s *Screen) cursorUp(n int) {
	b := s.cur
	if d := b.y - b.top; d >= 0 {
		s.moveCursor(0, -min(d, n))
	} else {
		s.moveCursor(0, -n)
	}
}

func (s *Screen) cursorDown(n int) {
	b := s.cur
	if d := b.bottom - b.y; d >= 0 {
		s.moveCursor(0, min(d, n))
	} else {
		s.moveCursor(0, n)
	}
}

func (s *Screen) protected(c cell) bool {
	return s.styles.get(c.s).bg&bgProtected != 0
}

func (s *Screen) eraseInBufferLine(y, start, end int, clearWrap, respectProtect bool) {
	l := &s.cur.lines[y]
	replaceCells(l.cells, start, end, cell{c: w1, s: s.eraseID()}, respectProtect, s.protected)
	if clearWrap {
		l.wrapped = false
	}
}

func (s *Screen) resetBufferLine(y int, respectProtect bool) {
	l := &s.cur.lines[y]
	fill := cell{c: w1, s: s.eraseID()}
	if respectProtect {
		for i, c := range l.cells {
			if !s.protected(c) {
				l.cells[i] = fill
			}
		}
	} else {
		fillCells(l.cells, fill)
	}
	l.wrapped = false
	l.marks = 0
}

func (s *Screen) eraseInDisplay(mode int, respectProtect bool) {
	b := s.cur
	s.restrict(s.cols)
	switch mode {
	case 0:
		s.eraseInBufferLine(b.y, b.x, s.cols, b.x == 0, respectProtect)
		for y := b.y + 1; y < s.rows; y++ {
			s.resetBufferLine(y, respectProtect)
		}
	case 1:
		s.eraseInBufferLine(b.y, 0, b.x+1, true, respectProtect)
		if b.x+1 >= s.cols {
			// xterm.js unwraps the line at absolute index y+1 (not the one
			// below the cursor): with scrollback, a line of it.
			s.unwrapAbsolute(b.y + 1)
		}
		for y := b.y - 1; y >= 0; y-- {
			s.resetBufferLine(y, respectProtect)
		}
	case 2:
		for y := s.rows - 1; y >= 0; y-- {
			s.resetBufferLine(y, respectProtect)
		}
	case 3:
		if s.cur == s.normal {
			s.sb.clear()
		} else {
			s.alt.hidden = nil
		}
	}
}

// unwrapAbsolute clears the wrapped flag of the line at index i counted
// from the top of the active buffer's scrollback.
func (s *Screen) unwrapAbsolute(i int) {
	yb := s.ybase()
	switch {
	case i < yb && s.cur == s.alt:
		s.alt.hidden[i].wrapped = false
	case i < yb:
		s.sb.clearWrapped(i)
	case i-yb < s.rows:
		s.cur.lines[i-yb].wrapped = false
	}
}

func (s *Screen) eraseInLine(mode int, respectProtect bool) {
	b := s.cur
	s.restrict(s.cols)
	switch mode {
	case 0:
		s.eraseInBufferLine(b.y, b.x, s.cols, b.x == 0, respectProtect)
	case 1:
		s.eraseInBufferLine(b.y, 0, b.x+1, false, respectProtect)
	case 2:
		s.eraseInBufferLine(b.y, 0, s.cols, true, respectProtect)
	}
}

// insertLines is IL: n blank lines at the cursor, inside the scroll
// region; the region's last lines fall off.
func (s *Screen) insertLines(n int) {
	b := s.cur
	s.restrict(s.cols - 1)
	if b.y > b.bottom || b.y < b.top {
		return
	}
	n = min(n, b.bottom-b.y+1)
	sid := s.eraseID()
	for ; n > 0; n-- {
		l := b.lines[b.bottom]
		copy(b.lines[b.y+1:b.bottom+1], b.lines[b.y:b.bottom])
		s.recycle(&l, sid)
		b.lines[b.y] = l
	}
	b.x = 0
}

func (s *Screen) deleteLines(n int) {
	b := s.cur
	s.restrict(s.cols - 1)
	if b.y > b.bottom || b.y < b.top {
		return
	}
	n = min(n, b.bottom-b.y+1)
	sid := s.eraseID()
	for ; n > 0; n-- {
		l := b.lines[b.y]
		s.recycle(&l, sid)
		b.rollUp(b.y, b.bottom, l)
	}
	b.x = 0
}

// scrollUp is SU: the region moves up n lines; nothing goes to the
// scrollback.
func (s *Screen) scrollUp(n int) {
	b := s.cur
	n = min(n, b.bottom-b.top+1)
	sid := s.eraseID()
	for ; n > 0; n-- {
		l := b.lines[b.top]
		s.recycle(&l, sid)
		b.rollUp(b.top, b.bottom, l)
	}
}

// scrollDown is SD; its new lines are blank in the default style (not the
// erase style), as in xterm.js.
func (s *Screen) scrollDown(n int) {
	b := s.cur
	n = min(n, b.bottom-b.top+1)
	for ; n > 0; n-- {
		l := b.lines[b.bottom]
		copy(b.lines[b.top+1:b.bottom+1], b.lines[b.top:b.bottom])
		s.recycle(&l, 0)
		b.lines[b.top] = l
	}
}

// shiftColumns inserts (or deletes) n columns in every line of the scroll
// region, at column 0 (SL, SR) or at the cursor (DECIC, DECDC).
func (s *Screen) shiftColumns(n int, insert, atZero bool) {
	b := s.cur
	if b.y > b.bottom || b.y < b.top {
		return
	}
	x := b.x
	if atZero {
		x = 0
	}
	fill := cell{c: w1, s: s.eraseID()}
	for y := b.top; y <= b.bottom; y++ {
		l := &b.lines[y]
		if insert {
			insertCells(l.cells, x, n, fill)
		} else {
			deleteCells(l.cells, x, n, fill)
		}
		l.wrapped = false
	}
}

// repeatPreceding is REP (CSI b): the last printed character again, n
// times, unless something other than printing came since. The repeats are
// one run of printing, as in xterm.js.
func (s *Screen) repeatPreceding(n int) {
	w := int(s.prevWidth)
	if w == 0 {
		return
	}
	b := s.cur
	c := cellAt(b.lines[b.y].cells, b.x-w)
	str := s.cellString(c)
	if str == "" {
		return
	}
	// Once the repeats have filled the screen and the scrollback, more of
	// them only move the cursor along the rows, a row's worth at a time:
	// skip whole rows' worth.
	perRow := max(s.cols/max(c.width(), 1), 1)
	lines := s.rows + 2
	if s.cur == s.normal {
		lines += max(s.sb.maxLines, 0)
	}
	if limit := lines * perRow; n > limit {
		n = limit + (n-limit)%perRow
	}
	if len(str) == 1 && str[0] >= 0x20 && str[0] < 0x7f {
		var buf [256]byte
		for i := range buf {
			buf[i] = str[0]
		}
		for n > 0 {
			k := min(n, len(buf))
			s.printASCII(buf[:k])
			n -= k
		}
	} else {
		for ; n > 0; n-- {
			for _, r := range str {
				s.putRune(r)
			}
		}
	}
	s.endRun()
}

func (s *Screen) setMode(on bool) {
	p := &s.p.p
	for i := 0; i < p.n; i++ {
		switch p.v[i] {
		case 4:
			s.modes.insert = on
		case 20:
			s.modes.newline = on
		}
	}
}

func (s *Screen) setPrivateMode(on bool) {
	p := &s.p.p
	m := &s.modes
	for i := 0; i < p.n; i++ {
		switch v := p.v[i]; v {
		case 1:
			m.appCursor = on
		case 2:
			if on {
				for g := range s.gsets {
					s.setGCharset(g, 0)
				}
			}
		case 6:
			m.origin = on
			s.setCursor(0, 0)
		case 7:
			m.wrap = on
		case 12:
			m.blinkOption = 2
			if on {
				m.blinkOption = 1
			}
		case 45:
			m.reverseWrap = on
		case 66:
			m.appKeypad = on
		case 9, 1000, 1002, 1003:
			m.mouse = mouseNone
			if on {
				switch v {
				case 9:
					m.mouse = mouseX10
				case 1000:
					m.mouse = mouseVT200
				case 1002:
					m.mouse = mouseDrag
				default:
					m.mouse = mouseAny
				}
			}
		case 1004:
			m.focus = on
		case 1005:
			m.mouseUTF8 = on
		case 1006:
			m.mouseEnc = mouseEncDefault
			if on {
				m.mouseEnc = mouseEncSGR
			}
		case 1015:
			m.mouseURXVT = on
		case 1016:
			m.mouseEnc = mouseEncDefault
			if on {
				m.mouseEnc = mouseEncSGRPixels
			}
		case 25:
			m.hidden = !on
		case 1048:
			if on {
				s.saveCursor()
			} else {
				s.restoreCursor()
			}
		case 1049, 47, 1047:
			if on {
				if v == 1049 {
					s.saveCursor()
				}
				s.activateAlt()
			} else {
				s.activateNormal()
				if v == 1049 {
					s.restoreCursor()
				}
			}
		case 2004:
			m.bracketedPaste = on
		case 2026:
			m.sync = on
		}
	}
}

// setCursorStyle is DECSCUSR (CSI Ps SP q).
func (s *Screen) setCursorStyle(ps int) {
	m := &s.modes
	if ps == 0 {
		m.cursorStyle, m.cursorBlink = 0, 0
		return
	}
	switch ps {
	case 1, 2:
		m.cursorStyle = 1
	case 3, 4:
		m.cursorStyle = 3
	case 5, 6:
		m.cursorStyle = 5
	}
	m.cursorBlink = 2
	if ps%2 == 1 {
		m.cursorBlink = 1
	}
}

// sgr is SGR (CSI Pm m).
func (s *Screen) sgr() {
	p := &s.p.p
	a := &s.attr
	s.attrOK = false
	if p.n == 1 && p.v[0] == 0 {
		s.sgr0()
		return
	}
	for i := 0; i < p.n; i++ {
		v := int(p.v[i])
		switch {
		case v >= 30 && v <= 37:
			a.fg = a.fg&^(cmMask|0xFF) | cmP16 | uint32(v-30)
		case v >= 40 && v <= 47:
			a.bg = a.bg&^(cmMask|0xFF) | cmP16 | uint32(v-40)
		case v >= 90 && v <= 97:
			a.fg = a.fg&^(cmMask|0xFF) | cmP16 | uint32(v-90) | 8
		case v >= 100 && v <= 107:
			a.bg = a.bg&^(cmMask|0xFF) | cmP16 | uint32(v-100) | 8
		case v == 0:
			s.sgr0()
		case v == 1:
			a.fg |= fgBold
		case v == 3:
			a.bg |= bgItalic
		case v == 4:
			a.fg |= fgUnderline
			style := 1
			if sub := p.subs(i); len(sub) > 0 {
				style = int(sub[0])
			}
			s.underline(style)
		case v == 5:
			a.fg |= fgBlink
		case v == 7:
			a.fg |= fgInverse
		case v == 8:
			a.fg |= fgInvisible
		case v == 9:
			a.fg |= fgStrike
		case v == 2:
			a.bg |= bgDim
		case v == 21:
			s.underline(2)
		case v == 22:
			a.fg &^= fgBold
			a.bg &^= bgDim
		case v == 23:
			a.bg &^= bgItalic
		case v == 24:
			a.fg &^= fgUnderline
			s.underline(0)
		case v == 25:
			a.fg &^= fgBlink
		case v == 27:
			a.fg &^= fgInverse
		case v == 28:
			a.fg &^= fgInvisible
		case v == 29:
			a.fg &^= fgStrike
		case v == 39:
			a.fg &^= cmMask | rgbMask
		case v == 49:
			a.bg &^= cmMask | rgbMask
		case v == 38 || v == 48 || v == 58:
			i += s.extendedColor(i)
		case v == 53:
			a.bg |= bgOverline
		case v == 55:
			a.bg &^= bgOverline
		case v == 59:
			// xterm.js stores -1 here, which its color mask turns into
			// RGB white.
			a.ulColor = colorMask
			a.updateExt()
		}
	}
}

func (s *Screen) sgr0() {
	a := &s.attr
	a.fg, a.bg = 0, 0
	a.ulStyle = 0
	a.ulColor = 0
	a.updateExt()
	s.attrOK = false
}

func (s *Screen) underline(style int) {
	a := &s.attr
	if style == -1 || style > 5 {
		style = 1
	}
	a.ulStyle = uint8(style)
	a.fg |= fgUnderline
	if style == 0 {
		a.fg &^= fgUnderline
	}
	a.updateExt()
}

// extendedColor reads SGR 38, 48 or 58 at parameter i, in any of the forms
// xterm.js reads (38;5;n, 38;2;r;g;b, 38:5:n, 38:2:cs:r:g:b and their
// mixtures, with its way of counting an optional color space), sets the
// color, and returns how many more parameters it used.
func (s *Screen) extendedColor(pos int) int {
	p := &s.p.p
	acc := [6]int{0, 0, -1, 0, 0, 0}
	set := func(i, v int) {
		if i < len(acc) {
			acc[i] = v
		}
	}
	cs := 0
	adv := 0
	for {
		set(adv+cs, p.get(pos+adv))
		if sub := p.subs(pos + adv); sub != nil {
			for i := 0; ; {
				if acc[1] == 5 {
					cs = 1
				}
				set(adv+i+1+cs, int(sub[i]))
				i++
				if i >= len(sub) || i+adv+1+cs >= len(acc) {
					break
				}
			}
			break
		}
		if (acc[1] == 5 && adv+cs >= 2) || (acc[1] == 2 && adv+cs >= 5) {
			break
		}
		if acc[1] != 0 {
			cs = 1
		}
		adv++
		if adv+pos >= p.n || adv+cs >= len(acc) {
			break
		}
	}
	for i := 2; i < len(acc); i++ {
		if acc[i] == -1 {
			acc[i] = 0
		}
	}
	a := &s.attr
	switch acc[0] {
	case 38:
		a.fg = updateColor(a.fg, acc[1], acc[3], acc[4], acc[5])
	case 48:
		a.bg = updateColor(a.bg, acc[1], acc[3], acc[4], acc[5])
	case 58:
		a.ulColor = updateColor(a.ulColor, acc[1], acc[3], acc[4], acc[5]) & colorMask
	}
	return adv
}

func updateColor(c uint32, mode, c1, c2, c3 int) uint32 {
	switch mode {
	case 2:
		c |= cmRGB
		c &^= rgbMask
		c |= uint32(c1&0xFF)<<16 | uint32(c2&0xFF)<<8 | uint32(c3&0xFF)
	case 5:
		c &^= cmMask | 0xFF
		c |= cmP256 | uint32(c1&0xFF)
	}
	return c
}
