package screen

// Scrolling the whole screen up is what a flood of output does once per
// line, and moving every row up by one copied the screen's row headers
// each time (50 rows: 2 KB a line of output, more than the line's
// cells). A buffer's rows are instead a window into a larger array: a
// scroll of the whole screen slides the window down one row and appends
// the recycled row, and only when the array is used up are the rows
// copied back to its start, once every so many scrolls. Everything else
// still indexes b.lines as before.

// rollUp moves rows top+1..bottom up one and puts l in row bottom.
func (b *buffer) rollUp(top, bottom int, l line) {
	if top != 0 || bottom != len(b.lines)-1 {
		copy(b.lines[top:bottom], b.lines[top+1:bottom+1])
		b.lines[bottom] = l
		return
	}
	if cap(b.lines) == len(b.lines) || !b.inWindow() {
		b.rebase()
	}
	// The slot left above the window keeps a copy of the old top row's
	// header, whose cells are l's; rebase clears it.
	b.lines = append(b.lines[1:], l)
}

// inWindow reports whether b.lines lies in b.base, ending where it ends:
// code that replaces b.lines (a resize, a checkpoint, the alternate
// screen) leaves a base it no longer uses.
func (b *buffer) inWindow() bool {
	return cap(b.base) > 0 && cap(b.lines) > 0 &&
		&b.base[:cap(b.base)][cap(b.base)-1] == &b.lines[:cap(b.lines)][cap(b.lines)-1]
}

// rebase copies the rows to the start of their array, which it first
// makes twice their number long if it is not (so that a rebase comes at
// most once every len(b.lines) scrolls), and clears the slots after them.
func (b *buffer) rebase() {
	n := len(b.lines)
	if !b.inWindow() || cap(b.base) < 2*n {
		b.base = make([]line, 2*n)
	}
	copy(b.base, b.lines)
	clear(b.base[n:])
	b.lines = b.base[:n:len(b.base)]
}
