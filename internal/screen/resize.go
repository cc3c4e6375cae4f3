package screen

import "sort"

// Resize changes the screen's size (each 1..4096; fewer than 2 columns
// become 2, as in xterm.js). It follows xterm.js's Buffer.resize: rows
// added at the bottom come from the scrollback when the cursor is on the
// last row, rows removed go below the cursor first, and the normal
// buffer's soft-wrapped lines reflow to the new width (except the line the
// cursor is on, which xterm.js leaves alone).
func (s *Screen) Resize(cols, rows int) {
	if cols == s.cols && rows == s.rows {
		return
	}
	cols = clampDim(cols, minCols)
	rows = clampDim(rows, 1)
	s.leave()
	defer s.back()
	s.endRun()
	oldCols, oldRows := s.cols, s.rows
	s.resizeNormal(oldCols, oldRows, cols, rows)
	s.resizeAlt(oldCols, oldRows, cols, rows)
	s.cols, s.rows = cols, rows
	s.normal.extendTabs(cols)
	s.alt.extendTabs(cols)
}

// rline is a line during a resize. comb mirrors xterm.js's per-line table
// of multi-code-point strings, which its reflow copies in bulk (see
// copyCells): a cell with combFlag takes its string from comb at its
// column when the resize is over.
type rline struct {
	cells   []cell
	wrapped bool
	marks   uint8
	comb    map[int]string
}

func (s *Screen) newRline(l *line) *rline {
	r := &rline{cells: l.cells, wrapped: l.wrapped, marks: l.marks}
	for i, c := range l.cells {
		if c.c&combFlag != 0 {
			if r.comb == nil {
				r.comb = make(map[int]string)
			}
			r.comb[i] = s.cellString(c)
		}
	}
	return r
}

func blankRline(cols int, wrapped bool) *rline {
	r := &rline{cells: make([]cell, cols), wrapped: wrapped}
	fillCells(r.cells, blankCell)
	return r
}

// setLength is xterm.js's BufferLine.resize: new cells are blank; cells
// cut off lose their strings.
func (r *rline) setLength(n int) {
	old := len(r.cells)
	switch {
	case n > old:
		if cap(r.cells) >= n {
			r.cells = r.cells[:n]
		} else {
			c := make([]cell, n)
			copy(c, r.cells)
			r.cells = c
		}
		fillCells(r.cells[old:], blankCell)
	case n < old:
		r.cells = r.cells[:n:n]
		for k := range r.comb {
			if k >= n {
				delete(r.comb, k)
			}
		}
	}
}

// copyCells is xterm.js's copyCellsFrom: length cells of src from srcCol
// to dst at destCol; then every string entry of src at or after srcCol
// (not only the copied ones) is copied to the same offset in dst.
func copyCells(dst, src *rline, srcCol, destCol, length int, reverse bool) {
	at := func(k int) {
		c := cell{}
		if i := srcCol + k; i >= 0 && i < len(src.cells) {
			c = src.cells[i]
		}
		setAt(dst.cells, destCol+k, c)
	}
	if reverse {
		for k := length - 1; k >= 0; k-- {
			at(k)
		}
	} else {
		for k := 0; k < length; k++ {
			at(k)
		}
	}
	if len(src.comb) == 0 {
		return
	}
	keys := make([]int, 0, len(src.comb))
	for k := range src.comb {
		if k >= srcCol {
			keys = append(keys, k)
		}
	}
	sort.Ints(keys)
	for _, k := range keys {
		if dst.comb == nil {
			dst.comb = make(map[int]string)
		}
		dst.comb[k-srcCol+destCol] = src.comb[k]
	}
}

// wrappedTrimmedLength is the length of line i of a wrapped group that
// counts when reflowing: its trimmed length if it is the last, else the
// whole width, less the last cell if it is an empty cell before a wide
// character that did not fit.
func wrappedTrimmedLength(lines []*rline, i, cols int) int {
	if i == len(lines)-1 {
		return trimmedLength(lines[i].cells)
	}
	last := cellAt(lines[i].cells, cols-1)
	endsInNull := !last.hasContent() && last.width() == 1
	followingWide := cellAt(lines[i+1].cells, 0).width() == 2
	if endsInNull && followingWide {
		return cols - 1
	}
	return cols
}

func (s *Screen) resizeNormal(oldCols, oldRows, cols, rows int) {
	defer s.sb.release() // the history read cache
	b := s.normal
	sbCap := max(s.sb.maxLines, 0)
	reflow := cols != oldCols

	// Without reflow only the newest scrollback lines can move (back onto
	// the screen); leave the others packed.
	tail := s.sb.len()
	if !reflow {
		tail = min(tail, max(0, rows-oldRows))
	}
	prefix := s.sb.len() - tail
	lines := make([]*rline, 0, tail+oldRows)
	for i := prefix; i < s.sb.len(); i++ {
		var l line
		if s.decodeLine(s.sb.line(i), oldCols, &l) != nil {
			l = line{cells: make([]cell, oldCols)}
			fillCells(l.cells, blankCell)
		}
		lines = append(lines, s.newRline(&l))
	}
	s.sb.truncate(prefix)
	for y := range b.lines {
		c := make([]cell, len(b.lines[y].cells))
		copy(c, b.lines[y].cells)
		l := b.lines[y]
		l.cells = c
		lines = append(lines, s.newRline(&l))
	}
	ybase := tail // scrollback lines within lines

	maxLength := oldRows + sbCap
	newMaxLength := rows + sbCap
	if newMaxLength > maxLength {
		maxLength = newMaxLength
	}
	if oldCols < cols {
		for _, l := range lines {
			l.setLength(cols)
		}
	}
	addToY := 0
	if oldRows < rows {
		for y := oldRows; y < rows; y++ {
			if len(lines) < rows+ybase {
				if ybase > 0 && len(lines) <= ybase+b.y+addToY+1 {
					ybase--
					addToY++
				} else {
					lines = append(lines, blankRline(cols, false))
				}
			}
		}
	} else {
		for y := oldRows; y > rows; y-- {
			if len(lines) > rows+ybase {
				if len(lines) > ybase+b.y+1 {
					lines = lines[:len(lines)-1]
				} else {
					ybase++
				}
			}
		}
	}
	if newMaxLength < maxLength {
		if trim := prefix + len(lines) - newMaxLength; trim > 0 {
			fromPrefix := min(trim, prefix)
			for k := 0; k < fromPrefix; k++ {
				s.sb.dropOldest()
			}
			prefix -= fromPrefix
			if rest := trim - fromPrefix; rest > 0 {
				rest = min(rest, len(lines))
				lines = lines[rest:]
				ybase = max(ybase-rest, 0)
			}
			b.savedY = max(b.savedY-trim, 0)
		}
		maxLength = newMaxLength
	}
	b.x = min(b.x, cols-1)
	b.y = min(b.y, rows-1) + addToY
	b.savedX = min(b.savedX, cols-1)
	b.top = 0
	b.bottom = rows - 1

	if reflow {
		// With reflow, every scrollback line is in lines (prefix is 0).
		if cols > oldCols {
			lines, ybase = s.reflowLarger(lines, ybase, oldCols, cols, rows)
		} else {
			lines, ybase = s.reflowSmaller(lines, ybase, oldCols, cols, rows, maxLength)
			for _, l := range lines {
				l.setLength(cols)
			}
		}
	}

	// Settle combined strings, then split scrollback and screen.
	for _, l := range lines {
		for i, c := range l.cells {
			if c.c&combFlag != 0 {
				str, ok := l.comb[i]
				if !ok || str == "" {
					str = s.cellString(c)
				}
				l.cells[i].c = c.c&^cpMask | s.combine(str)
			}
		}
	}
	ybase = min(ybase, len(lines))
	for _, l := range lines[:ybase] {
		s.pushScrollback(&line{cells: l.cells, wrapped: l.wrapped, marks: l.marks})
	}
	screen := s.blankLinesW(rows, cols, 0)
	for y := 0; y < rows && ybase+y < len(lines); y++ {
		l := lines[ybase+y]
		copy(screen[y].cells, l.cells)
		screen[y].wrapped = l.wrapped
		screen[y].marks = l.marks
	}
	b.lines, b.base = screen, nil
	b.y = min(max(b.y, 0), rows-1)
}

func (s *Screen) resizeAlt(oldCols, oldRows, cols, rows int) {
	a := s.alt
	if len(a.lines) == 0 {
		// Unused: xterm.js grows its line capacity, and nothing else.
		a.maxLen = max(a.maxLen, rows)
		a.bottom = rows - 1
		return
	}
	lines := append(append([]line(nil), a.hidden...), a.lines...)
	ybase := len(a.hidden)
	if oldCols < cols {
		for i := range lines {
			r := rline{cells: lines[i].cells}
			r.setLength(cols)
			lines[i].cells = r.cells
		}
	}
	if rows > a.maxLen {
		a.maxLen = rows
	}
	addToY := 0
	if oldRows < rows {
		for y := oldRows; y < rows; y++ {
			if len(lines) < rows+ybase {
				if ybase > 0 && len(lines) <= ybase+a.y+addToY+1 {
					ybase--
					addToY++
				} else {
					lines = append(lines, s.blankLinesW(1, cols, 0)...)
				}
			}
		}
	} else {
		for y := oldRows; y > rows; y-- {
			if len(lines) > rows+ybase {
				if len(lines) > ybase+a.y+1 {
					lines = lines[:len(lines)-1]
				} else {
					ybase++
				}
			}
		}
	}
	if rows < a.maxLen {
		if trim := len(lines) - rows; trim > 0 {
			lines = lines[trim:]
			ybase = max(ybase-trim, 0)
			a.savedY = max(a.savedY-trim, 0)
		}
		a.maxLen = rows
	}
	a.x = min(a.x, cols-1)
	a.y = min(a.y, rows-1) + addToY
	a.savedX = min(a.savedX, cols-1)
	a.top = 0
	a.bottom = rows - 1
	ybase = min(ybase, len(lines))
	a.hidden = append([]line(nil), lines[:ybase]...)
	a.lines = append([]line(nil), lines[ybase:]...)
	for len(a.lines) < rows {
		a.lines = append(a.lines, s.blankLinesW(1, cols, 0)...)
	}
	a.lines, a.base = a.lines[:rows], nil
	a.y = min(max(a.y, 0), rows-1)
}

// blankLinesW is blankLines for a width other than the screen's.
func (s *Screen) blankLinesW(n, cols int, sid uint32) []line {
	cells := make([]cell, n*cols)
	fillCells(cells, cell{c: w1, s: sid})
	lines := make([]line, n)
	for i := range lines {
		lines[i].cells = cells[i*cols : (i+1)*cols : (i+1)*cols]
	}
	return lines
}

// reflowLarger joins soft-wrapped lines into the wider rows
// (xterm.js _reflowLarger).
func (s *Screen) reflowLarger(lines []*rline, ybase, oldCols, cols, rows int) ([]*rline, int) {
	b := s.normal
	toRemove := linesToRemove(lines, oldCols, cols, ybase+b.y)
	if len(toRemove) == 0 {
		return lines, ybase
	}
	out := make([]*rline, 0, len(lines))
	removed := 0
	next := 0
	for i := 0; i < len(lines); i++ {
		if next < len(toRemove) && toRemove[next] == i {
			n := toRemove[next+1]
			i += n - 1
			removed += n
			next += 2
			continue
		}
		out = append(out, lines[i])
	}
	lines = out
	for k := removed; k > 0; k-- {
		if ybase == 0 {
			if b.y > 0 {
				b.y--
			}
			if len(lines) < rows {
				lines = append(lines, blankRline(cols, false))
			}
		} else {
			ybase--
		}
	}
	b.savedY = max(b.savedY-removed, 0)
	return lines, ybase
}

// linesToRemove moves the cells of each wrapped group up into its first
// lines and returns (start, count) pairs of the lines left empty
// (xterm.js reflowLargerGetLinesToRemove).
func linesToRemove(lines []*rline, oldCols, cols, cursorAbs int) []int {
	var toRemove []int
	for y := 0; y < len(lines)-1; y++ {
		i := y + 1
		if !lines[i].wrapped {
			continue
		}
		group := []*rline{lines[y]}
		for i < len(lines) && lines[i].wrapped {
			group = append(group, lines[i])
			i++
		}
		if cursorAbs >= y && cursorAbs < i {
			y += len(group) - 1
			continue
		}
		dest := 0
		destCol := wrappedTrimmedLength(group, 0, oldCols)
		src := 1
		srcCol := 0
		for src < len(group) && dest < len(group) {
			srcTrimmed := wrappedTrimmedLength(group, src, oldCols)
			n := min(srcTrimmed-srcCol, cols-destCol)
			copyCells(group[dest], group[src], srcCol, destCol, n, false)
			destCol += n
			if destCol == cols {
				dest++
				destCol = 0
			}
			srcCol += n
			if srcCol == srcTrimmed {
				src++
				srcCol = 0
			}
			if destCol == 0 && dest != 0 && dest < len(group) && cellAt(group[dest-1].cells, cols-1).width() == 2 {
				copyCells(group[dest], group[dest-1], cols-1, destCol, 1, false)
				destCol++
				setAt(group[dest-1].cells, cols-1, blankCell)
			}
		}
		// Wide characters moved to the start of the next row can fill
		// every row of the group; xterm.js then fails on the row past its
		// end (it throws), the model stops there.
		if dest < len(group) {
			replaceCells(group[dest].cells, destCol, cols, blankCell, false, nil)
		}
		count := 0
		for k := len(group) - 1; k > 0; k-- {
			if k > dest || trimmedLength(group[k].cells) == 0 {
				count++
			} else {
				break
			}
		}
		if count > 0 {
			toRemove = append(toRemove, y+len(group)-count, count)
		}
		y += len(group) - 1
	}
	return toRemove
}

// newLineLengths is how a wrapped group's cells fall into rows of the new
// width (xterm.js reflowSmallerGetNewLineLengths): a row one short when a
// wide character would straddle its end.
func newLineLengths(group []*rline, oldCols, cols int) []int {
	var out []int
	needed := 0
	for i := range group {
		needed += wrappedTrimmedLength(group, i, oldCols)
	}
	srcCol, srcLine, avail := 0, 0, 0
	for avail < needed {
		if needed-avail < cols {
			out = append(out, needed-avail)
			break
		}
		srcCol += cols
		if old := wrappedTrimmedLength(group, min(srcLine, len(group)-1), oldCols); srcCol > old {
			srcCol -= old
			srcLine++
		}
		wide := false
		if srcLine < len(group) {
			wide = cellAt(group[srcLine].cells, srcCol-1).width() == 2
		}
		if wide {
			srcCol--
		}
		n := cols
		if wide {
			n = cols - 1
		}
		out = append(out, n)
		avail += n
	}
	return out
}

// reflowSmaller splits lines longer than the new width into wrapped rows
// (xterm.js _reflowSmaller).
func (s *Screen) reflowSmaller(lines []*rline, ybase, oldCols, cols, rows, maxLength int) ([]*rline, int) {
	b := s.normal
	type insertion struct {
		start int
		lines []*rline
	}
	var toInsert []insertion
	countToInsert := 0
	// xterm.js reads its line list past its end here (after popping lines
	// off it below) and gets the popped lines: keep them readable, and
	// nothing else past the end.
	lines = append(make([]*rline, 0, len(lines)), lines...)
	at := func(y int) *rline {
		if full := lines[:cap(lines)]; y < len(full) {
			return full[y]
		}
		return nil
	}
	for y := len(lines) - 1; y >= 0; y-- {
		next := at(y)
		if next == nil || !next.wrapped && trimmedLength(next.cells) <= cols {
			continue
		}
		group := []*rline{next}
		for next.wrapped && y > 0 {
			y--
			if next = at(y); next == nil {
				break
			}
			group = append([]*rline{next}, group...)
		}
		if next == nil {
			continue
		}
		if abs := ybase + b.y; abs >= y && abs < y+len(group) {
			continue
		}
		lastLen := trimmedLength(group[len(group)-1].cells)
		lengths := newLineLengths(group, oldCols, cols)
		if len(lengths) == 0 {
			continue
		}
		toAdd := len(lengths) - len(group)
		var trimmed int
		if ybase == 0 && b.y != len(lines)-1 {
			trimmed = max(0, b.y-maxLength+toAdd)
		} else {
			trimmed = max(0, len(lines)-maxLength+toAdd)
		}
		var added []*rline
		for k := 0; k < toAdd; k++ {
			added = append(added, blankRline(cols, true))
		}
		if len(added) > 0 {
			toInsert = append(toInsert, insertion{start: y + len(group) + countToInsert, lines: added})
			countToInsert += len(added)
		}
		group = append(group, added...)

		dest := len(lengths) - 1
		destCol := lengths[dest]
		if destCol == 0 {
			dest--
			if dest >= 0 {
				destCol = lengths[dest]
			}
		}
		src := len(group) - max(toAdd, 0) - 1
		srcCol := lastLen
		for src >= 0 {
			if dest < 0 || dest >= len(group) {
				break
			}
			n := min(srcCol, destCol)
			copyCells(group[dest], group[src], srcCol-n, destCol-n, n, true)
			destCol -= n
			if destCol == 0 {
				dest--
				if dest >= 0 {
					destCol = lengths[dest]
				}
			}
			srcCol -= n
			if srcCol == 0 {
				src--
				srcCol = wrappedTrimmedLength(group, max(src, 0), oldCols)
			}
		}
		for k := range group {
			if k < len(lengths) && lengths[k] < cols {
				setAt(group[k].cells, lengths[k], blankCell)
			}
		}
		for adj := toAdd - trimmed; adj > 0; adj-- {
			if ybase == 0 {
				if b.y < rows-1 {
					b.y++
					lines = lines[:len(lines)-1]
				} else {
					ybase++
				}
			} else if ybase < min(maxLength, len(lines)+countToInsert)-rows {
				ybase++
			}
		}
		b.savedY = min(b.savedY+toAdd, ybase+rows-1)
	}
	if len(toInsert) == 0 {
		return lines, ybase
	}
	orig := lines
	newLen := min(maxLength, len(orig)+countToInsert)
	out := make([]*rline, newLen)
	origIdx := len(orig) - 1
	nextIdx := 0
	inserted := 0
	for i := min(maxLength-1, len(orig)+countToInsert-1); i >= 0; i-- {
		if nextIdx < len(toInsert) && toInsert[nextIdx].start > origIdx+inserted {
			ins := toInsert[nextIdx]
			for k := len(ins.lines) - 1; k >= 0; k-- {
				if i >= 0 && i < newLen {
					out[i] = ins.lines[k]
				}
				i--
			}
			i++
			inserted += len(ins.lines)
			nextIdx++
		} else {
			if i < newLen && origIdx >= 0 {
				out[i] = orig[origIdx]
			}
			origIdx--
		}
	}
	for i := range out {
		if out[i] == nil {
			out[i] = blankRline(cols, false)
		}
	}
	return out, ybase
}
