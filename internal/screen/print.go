package screen

import "encoding/binary"

// Printing follows xterm.js's print(): characters arrive in runs (the
// printable characters between two other things in one Write), and the
// fix-ups for a wide character cut in half are made at the ends of a run,
// not after each character, so a run can leave the same odd cells
// xterm.js leaves.

// beginRun starts a run of printed characters: a wide character whose
// second half the first character will overwrite is erased.
func (s *Screen) beginRun() {
	s.inRun = true
	b := s.cur
	if b.x > 0 {
		l := &b.lines[b.y]
		if cellAt(l.cells, b.x-1).width() == 2 {
			l.cells[b.x-1] = cell{c: w1, s: s.curID()}
			s.wrote(l, b.x)
		}
	}
}

// endRun ends a run: a continuation cell left after the cursor (its wide
// character overwritten) is erased.
func (s *Screen) endRun() {
	if !s.inRun {
		return
	}
	s.inRun = false
	b := s.cur
	if b.x < s.cols {
		l := &b.lines[b.y]
		if c := cellAt(l.cells, b.x); c.width() == 0 && !c.hasContent() && b.x < len(l.cells) {
			l.cells[b.x] = cell{c: w1, s: s.curID()}
			s.wrote(l, b.x+1)
		}
	}
}

// printASCII prints printable ASCII characters: the fast path for plain
// text, writing cells straight into the row.
func (s *Screen) printASCII(p []byte) {
	if !s.inRun {
		s.beginRun()
	}
	if s.charset != 0 || s.modes.insert {
		for _, c := range p {
			s.putRune(rune(c))
		}
		return
	}
	b := s.cur
	cols := s.cols
	sid := s.curID()
	s.prevWidth = 1
	for len(p) > 0 {
		if b.x >= cols {
			if s.modes.wrap {
				s.wrapLine()
			} else {
				// Without auto-wrap every character lands in the last
				// column; only the last one stays.
				b.x = cols - 1
				p = p[len(p)-1:]
			}
		}
		l := &b.lines[b.y]
		n := min(len(p), cols-b.x)
		src := p[:n]
		dst := l.cells[b.x : b.x+n]
		dst = dst[:len(src)] // no bounds check in the loop
		for i, c := range src {
			dst[i] = cell{c: uint32(c) | w1, s: sid}
		}
		b.x += n
		s.wrote(l, b.x)
		p = p[n:]
	}
}

// asciiRun is the length of the run of printable ASCII (0x20 to 0x7e)
// that p starts with. Eight bytes a step: a word holds only printable
// ASCII when no byte has its high bit set, none is 0x7f (adding 1 would
// set it) and none is below 0x20 (adding 0x60 would not set it); with
// no high bit set no addition carries into the next byte.
func asciiRun(p []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	n := 0
	for ; len(p)-n >= 8; n += 8 {
		x := binary.LittleEndian.Uint64(p[n:])
		if (x|(x+ones)|^(x+0x60*ones))&highs != 0 {
			break
		}
	}
	for n < len(p) && p[n] >= 0x20 && p[n] < 0x7f {
		n++
	}
	return n
}

// slowPaths makes the parser take none of its fast paths: every
// character prints through putRune, the path of any character, not
// through those for printable ASCII, and every byte of an escape sequence
// goes through the table (the tests compare the two).
var slowPaths = false

// wrapLine is auto-wrap: the rest of the row is erased in the current
// style and the cursor goes to the start of the next row, which is marked
// as wrapped (scrolling at the bottom of the scroll region).
func (s *Screen) wrapLine() {
	b := s.cur
	row := &b.lines[b.y]
	sid := s.curID()
	oldX := b.x
	erase := func(l *line) {
		for x := oldX; x < s.cols && x < len(l.cells); x++ {
			l.cells[x] = cell{c: w1, s: sid}
		}
		if sid != 0 {
			s.wrote(l, s.cols)
		}
	}
	b.x = 0
	b.y++
	if b.y == b.bottom+1 {
		b.y--
		// xterm.js erases the rest of the old row after scrolling, in the
		// row object it had: with one row and no room for more lines,
		// scrolling recycles that very object as the new row.
		recycled := s.rows == 1 && (b == s.alt && b.maxLen <= s.rows || b == s.normal && s.sb.maxLines <= 0)
		if !recycled {
			erase(row)
		}
		s.scroll(true)
		if recycled {
			erase(&b.lines[b.y])
		}
		return
	}
	erase(row)
	if b.y >= s.rows {
		b.y = s.rows - 1
	}
	b.lines[b.y].wrapped = true
}

// putRune prints one character.
func (s *Screen) putRune(cp rune) {
	s.leave()
	s.putRuneUntracked(cp)
	s.back()
}

func (s *Screen) putRuneUntracked(cp rune) {
	if !s.inRun {
		s.beginRun()
	}
	if cp < 127 && s.charset != 0 {
		cp = mapCharset(s.charset, cp)
	}
	w := runeWidth(cp)
	join := false
	oldW := 0
	if w == 0 && s.prevWidth != 0 {
		join = true
		oldW = int(s.prevWidth)
		w = oldW
	}
	s.prevWidth = uint8(w)
	b := s.cur
	cols := s.cols
	if b.x+w-oldW > cols {
		if s.modes.wrap {
			// (A joining character never gets here: with its width equal
			// to the old one it cannot pass the margin.)
			s.wrapLine()
		} else {
			b.x = cols - 1
			if w == 2 {
				return
			}
		}
	}
	row := b.lines[b.y].cells
	if join && b.x > 0 {
		off := 1
		if cellAt(row, b.x-1).width() == 0 {
			off = 2
		}
		s.addToCell(row, b.x-off, cp, w)
		return
	}
	sid := s.curID()
	if s.modes.insert {
		insertCells(row, b.x, w-oldW, cell{c: w1, s: sid})
		if cellAt(row, cols-1).width() == 2 {
			row[cols-1] = cell{c: w1, s: sid}
		}
	}
	setAt(row, b.x, mkcell(cp, w, sid))
	b.x++
	for ; w > 1; w-- {
		setAt(row, b.x, cell{s: sid})
		b.x++
	}
}
