package main

import (
	"strings"
	"unicode/utf8"
)

// shrink says how one column of a table may give up width: down to min
// runes, losing its end (keepEnd false, a command's arguments) or its start
// (keepEnd true, a directory's parents).
type shrink struct {
	col     int
	min     int
	keepEnd bool
}

// fitTable shortens the cells of rows (the header first) so that a row,
// with gap spaces between columns, fits in width runes: the columns in
// order give up width, each down to its min, a cut cell showing "…". A
// width of 0 or less leaves rows as they are.
func fitTable(rows [][]string, width, gap int, order []shrink) [][]string {
	if width <= 0 || len(rows) == 0 {
		return rows
	}
	n := len(rows[0])
	widths := make([]int, n)
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	total := gap * (n - 1)
	for _, w := range widths {
		total += w
	}
	for _, s := range order {
		if total <= width {
			break
		}
		cut := min(total-width, widths[s.col]-s.min)
		if cut <= 0 {
			continue
		}
		widths[s.col] -= cut
		total -= cut
		for _, r := range rows {
			r[s.col] = truncate(r[s.col], widths[s.col], s.keepEnd)
		}
	}
	return rows
}

// truncate shortens s to w runes, its cut marked with "…".
func truncate(s string, w int, keepEnd bool) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	if w <= 1 {
		return strings.Repeat("…", max(w, 0))
	}
	if keepEnd {
		return "…" + string(r[len(r)-(w-1):])
	}
	return string(r[:w-1]) + "…"
}
