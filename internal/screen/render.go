package screen

import "strconv"

// Dump returns the screen in the dump form, normalized: the most recent
// scrollback lines (at most scrollback of them; -1 for all) and the
// active buffer's screen.
func (s *Screen) Dump(scrollback int) Dump {
	defer s.sb.release() // the history read cache
	m := s.modes
	d := Dump{
		Cols: s.cols,
		Rows: s.rows,
		Cursor: DumpCursor{
			X:       min(s.cur.x, s.cols-1),
			Y:       s.cur.y,
			Visible: !m.hidden,
		},
		Alt:   s.cur == s.alt,
		Title: s.title,
		Modes: DumpModes{
			ApplicationCursorKeys: m.appCursor,
			Wraparound:            m.wrap,
			Insert:                m.insert,
			Origin:                m.origin,
			BracketedPaste:        m.bracketedPaste,
			SendFocus:             m.focus,
			MouseTracking:         [...]string{"none", "x10", "vt200", "drag", "any"}[m.mouse],
		},
	}
	var l line
	for i := s.sbStart(scrollback); i < s.sb.len(); i++ {
		if s.decodeLine(s.sb.line(i), s.cols, &l) != nil {
			l = line{cells: make([]cell, s.cols)}
			fillCells(l.cells, blankCell)
		}
		d.Scrollback = append(d.Scrollback, s.dumpLine(&l))
	}
	for y := range s.cur.lines {
		d.Screen = append(d.Screen, s.dumpLine(&s.cur.lines[y]))
	}
	d.Normalize()
	return d
}

// sbStart is the index of the first of the last n scrollback lines (n < 0:
// all of them).
func (s *Screen) sbStart(n int) int {
	if total := s.sb.len(); n >= 0 && n < total {
		return total - n
	}
	return 0
}

func (s *Screen) dumpLine(l *line) DumpLine {
	dl := DumpLine{Wrapped: l.wrapped, Cells: make([]DumpCell, 0, s.cols)}
	for x := 0; x < s.cols; x++ {
		c := cellAt(l.cells, x)
		if x >= len(l.cells) {
			c = blankCell
		}
		st := s.styles.get(c.s)
		dc := DumpCell{Ch: s.cellString(c), W: c.width(), Fg: dumpColor(st.fg), Bg: dumpColor(st.bg)}
		var f []byte
		for _, a := range [...]struct {
			on     bool
			letter byte
		}{
			{st.fg&fgBold != 0, 'b'},
			{st.bg&bgDim != 0, 'd'},
			{st.bg&bgItalic != 0, 'i'},
			{st.underlined(), 'u'},
			{st.fg&fgBlink != 0, 'k'},
			{st.fg&fgInverse != 0, 'r'},
			{st.fg&fgInvisible != 0, 'h'},
			{st.fg&fgStrike != 0, 's'},
			{st.bg&bgOverline != 0, 'o'},
		} {
			if a.on {
				f = append(f, a.letter)
			}
		}
		dc.F = string(f)
		dl.Cells = append(dl.Cells, dc)
	}
	return dl
}

func dumpColor(c uint32) string {
	switch c & cmMask {
	case cmP16, cmP256:
		return "p" + strconv.Itoa(int(c&0xFF))
	case cmRGB:
		const hex = "0123456789abcdef"
		v := c & rgbMask
		b := []byte{'#', 0, 0, 0, 0, 0, 0}
		for i := 6; i >= 1; i-- {
			b[i] = hex[v&0xF]
			v >>= 4
		}
		return string(b)
	}
	return ""
}

// Text returns the screen as text, like `tmux capture-pane -p`: the
// visible rows (with up to scrollback lines above them while the normal
// buffer is shown), trailing blanks trimmed, each ended by '\n'.
func (s *Screen) Text(scrollback int) string {
	return s.text(scrollback, false)
}

// ANSI is Text with SGR sequences for the cells' styles, like `tmux
// capture-pane -p -e`; each line that changes the style resets it at its
// end.
func (s *Screen) ANSI(scrollback int) string {
	return s.text(scrollback, true)
}

func (s *Screen) text(scrollback int, sgr bool) string {
	defer s.sb.release() // the history read cache
	var out []byte
	emit := func(l *line) {
		out = s.appendText(out, l, sgr)
		out = append(out, '\n')
	}
	if s.cur == s.normal && scrollback != 0 {
		var l line
		for i := s.sbStart(scrollback); i < s.sb.len(); i++ {
			if s.decodeLine(s.sb.line(i), s.cols, &l) == nil {
				emit(&l)
			} else {
				out = append(out, '\n')
			}
		}
	}
	for y := range s.cur.lines {
		emit(&s.cur.lines[y])
	}
	return string(out)
}

func (s *Screen) appendText(out []byte, l *line, sgr bool) []byte {
	row := l.cells[:min(len(l.cells), s.cols)]
	end := len(row)
	for end > 0 {
		c := row[end-1]
		str := s.cellString(c)
		if str != "" && str != " " || c.width() == 0 {
			break
		}
		if sgr {
			st := s.styles.get(c.s)
			if st.bg&cmMask != 0 || st.fg&(fgInverse|fgStrike) != 0 || st.underlined() || st.bg&bgOverline != 0 {
				break
			}
		}
		end--
	}
	var cur uint32
	for x := 0; x < end; x++ {
		c := row[x]
		if c.width() == 0 && !c.hasContent() {
			continue
		}
		if sgr && c.s != cur {
			out = appendSGR(out, s.styles.get(c.s))
			cur = c.s
		}
		if c.hasContent() {
			out = s.appendCellString(out, c)
		} else {
			out = append(out, ' ')
		}
	}
	if sgr && cur != 0 {
		out = append(out, "\x1b[0m"...)
	}
	return out
}

// appendSGR appends the SGR sequence that sets exactly st (not its
// hyperlink).
func appendSGR(b []byte, st style) []byte {
	b = append(b, "\x1b[0"...)
	if st.fg&fgBold != 0 {
		b = append(b, ";1"...)
	}
	if st.bg&bgDim != 0 {
		b = append(b, ";2"...)
	}
	if st.bg&bgItalic != 0 {
		b = append(b, ";3"...)
	}
	if st.bg&bgHasExt != 0 && st.ulStyle != 0 {
		b = append(b, ";4:"...)
		b = strconv.AppendInt(b, int64(st.ulStyle), 10)
	} else if st.fg&fgUnderline != 0 {
		b = append(b, ";4"...)
	}
	if st.fg&fgBlink != 0 {
		b = append(b, ";5"...)
	}
	if st.fg&fgInverse != 0 {
		b = append(b, ";7"...)
	}
	if st.fg&fgInvisible != 0 {
		b = append(b, ";8"...)
	}
	if st.fg&fgStrike != 0 {
		b = append(b, ";9"...)
	}
	if st.bg&bgOverline != 0 {
		b = append(b, ";53"...)
	}
	b = appendSGRColor(b, st.fg, 30, 90, "38")
	b = appendSGRColor(b, st.bg, 40, 100, "48")
	if st.bg&bgHasExt != 0 && st.ulColor&cmMask != 0 {
		switch st.ulColor & cmMask {
		case cmRGB:
			b = append(b, ";58:2::"...)
			b = strconv.AppendInt(b, int64(st.ulColor>>16&0xFF), 10)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(st.ulColor>>8&0xFF), 10)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(st.ulColor&0xFF), 10)
		default:
			b = append(b, ";58:5:"...)
			b = strconv.AppendInt(b, int64(st.ulColor&0xFF), 10)
		}
	}
	return append(b, 'm')
}

func appendSGRColor(b []byte, c uint32, base, bright int, ext string) []byte {
	v := int(c & 0xFF)
	switch c & cmMask {
	case cmP16:
		b = append(b, ';')
		if v&8 != 0 {
			return strconv.AppendInt(b, int64(bright+v&7), 10)
		}
		return strconv.AppendInt(b, int64(base+v&7), 10)
	case cmP256:
		b = append(b, ';')
		b = append(b, ext...)
		b = append(b, ";5;"...)
		return strconv.AppendInt(b, int64(v), 10)
	case cmRGB:
		b = append(b, ';')
		b = append(b, ext...)
		b = append(b, ";2;"...)
		b = strconv.AppendInt(b, int64(c>>16&0xFF), 10)
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(c>>8&0xFF), 10)
		b = append(b, ';')
		return strconv.AppendInt(b, int64(c&0xFF), 10)
	}
	return b
}
