package screen

import "strconv"

// Viewport returns what paints a terminal of cols×rows, whole, with the
// top-left corner of the active screen: the screen clipped to the
// terminal where the terminal is smaller (a wide character cut by the
// right edge is drawn as a blank), and the rest of the terminal, where it
// is larger, filled with fill (dimmed), as tmux marks the area beyond a
// window's size. Every cell of the terminal is written, so nothing drawn
// before is left behind. The cursor is put where the screen has it and
// shown when it is visible and inside the terminal; the input modes the
// program set (cursor keys, keypad, bracketed paste) are set too. Autowrap
// is off while it paints and on after; the scroll region, origin and
// insert mode, character set and hyperlink are reset first.
//
// It is how `termkeep attach` draws a session whose size is not its
// terminal's: a byte stream made for one width cannot be clipped to
// another, a screen can.
func (s *Screen) Viewport(cols, rows int, fill rune) []byte {
	cols, rows = max(cols, 1), max(rows, 1)
	b := make([]byte, 0, cols*rows+rows*16)
	// What the terminal may have been left with by the session's bytes
	// before (a scroll region, origin or insert mode, a character set, a
	// hyperlink) would misplace or change what is painted.
	b = append(b, "\x1b[?25l\x1b[?7l\x1b[r\x1b[?6l\x1b[4l\x1b(B\x0f\x1b]8;;\x1b\\\x1b[0m"...)
	fillCell := string(fill)
	n := min(cols, s.cols)
	for y := range rows {
		b = append(b, "\x1b["...)
		b = strconv.AppendInt(b, int64(y+1), 10)
		b = append(b, ";1H"...)
		x := 0
		if y < s.rows {
			row := s.cur.lines[y].cells
			var cur uint32
			for x < n {
				c := cellAt(row, x)
				if x >= len(row) {
					c = blankCell
				}
				w := c.width()
				if w == 0 && !c.hasContent() {
					x++ // the second half of a wide character drawn before it
					continue
				}
				if c.s != cur {
					b = appendSGR(b, s.styles.get(c.s))
					cur = c.s
				}
				switch {
				case w == 0:
					// A lone combining mark would join the character
					// before and leave this cell unwritten.
					b = append(b, ' ')
				case w > 1 && x+w > n:
					b = append(b, ' ') // cut by the edge
					w = 1
				case c.hasContent():
					b = s.appendCellString(b, c)
				default:
					b = append(b, ' ')
				}
				x += max(w, 1)
			}
			if cur != 0 {
				b = append(b, "\x1b[0m"...)
			}
		}
		if x < cols {
			b = append(b, "\x1b[2m"...)
			for ; x < cols; x++ {
				b = append(b, fillCell...)
			}
			b = append(b, "\x1b[0m"...)
		}
	}
	im := s.InputModes()
	b = appendMode(b, 1, im.AppCursor)
	b = appendMode(b, 2004, im.BracketedPaste)
	if im.AppKeypad {
		b = append(b, "\x1b="...)
	} else {
		b = append(b, "\x1b>"...)
	}
	b = append(b, "\x1b[?7h"...)
	cx, cy := s.CursorPosition()
	if cx < cols && cy < rows {
		b = append(b, "\x1b["...)
		b = strconv.AppendInt(b, int64(cy+1), 10)
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(cx+1), 10)
		b = append(b, 'H')
		if !s.modes.hidden {
			b = append(b, "\x1b[?25h"...)
		}
	}
	return b
}

func appendMode(b []byte, mode int, on bool) []byte {
	b = append(b, "\x1b[?"...)
	b = strconv.AppendInt(b, int64(mode), 10)
	if on {
		return append(b, 'h')
	}
	return append(b, 'l')
}
