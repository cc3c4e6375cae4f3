package screen

import (
	"strings"
	"testing"
)

// inexactInputs leave cells whose characters do not take the cell's
// columns (see exactCell): the snapshot cannot make those cells again, but
// painting them must leave every other cell, the rows' wrapping and the
// cursor as they are.
var inexactInputs = []golden{
	// The reflow puts the string of the last wide character on the
	// combined cell after it (see copyCells): a narrow cell in the last
	// column holds a wide character, which printed as it is wraps the row.
	{name: "wide-string-last-column", cols: 6, rows: 5,
		in: "aa😀\u200b😀\u200b😀\u200be\u0301\x1b[9H", steps: []step{{cols: 5, rows: 5}}},
	// The same before a blank cell, which printed as it is it covers.
	{name: "wide-string-before-blank", cols: 7, rows: 5,
		in: "a😀\u200b😀\u200b😀\u200b😀\u200be\u0301\x1b[9H", steps: []step{{cols: 6, rows: 5}}},
	// After the resize the cursor follows an erased cell and the join
	// state survives: zero-width characters join the erased cell, and
	// printed on their own they would take a column each.
	{name: "zero-width-string-before-blank", cols: 6, rows: 2,
		in: "\x1b[5Gab", steps: []step{{cols: 4, rows: 2}, {in: "\u200b\u200b"}}},
	// The same before a character, which printing the string again for
	// the join state would overwrite.
	{name: "zero-width-string-before-char", cols: 5, rows: 2,
		in: "\x1b[3Ga", steps: []step{{cols: 3, rows: 2}, {in: "\u200b\u200b"}}},
	// Narrowing leaves the cursor on the second half of the wide character
	// just printed (without auto-wrap), with the join state of a wide one:
	// the wide character must stay.
	{name: "cursor-on-wide-after-resize", cols: 4, rows: 2,
		in: "\x1b[?7la\u4e2d", steps: []step{{cols: 3, rows: 2}}},
}

func TestSnapshotInexactCells(t *testing.T) {
	for _, g := range inexactInputs {
		t.Run(g.name, func(t *testing.T) {
			s := g.run(t)
			checkInvariants(t, s)
			snap := s.Snapshot(-1)
			r := New(s.cols, s.rows, Options{})
			r.Write(snap)
			checkInvariants(t, r)
			want, got := s.Dump(-1), r.Dump(-1)
			if len(got.Scrollback) != len(want.Scrollback) {
				t.Fatalf("snapshot %q brought %d scrollback lines, want %d", snap, len(got.Scrollback), len(want.Scrollback))
			}
			maskInexact(s, &want, &got)
			if d := Diff(&want, &got, 5); d != nil {
				t.Fatalf("snapshot %q differs:\n  %s", snap, strings.Join(d, "\n  "))
			}
		})
	}
}

// Widening a wrapped group whose wide characters move to the start of the
// next row can fill every row of the group (xterm.js throws there): the
// model must neither panic nor lose the characters.
func TestResizeWideCharsFillGroup(t *testing.T) {
	s := New(5, 3, Options{})
	s.Write([]byte("\nabcd中中"))
	s.Resize(3, 3)
	s.Write([]byte("\x1b[H"))
	s.Resize(4, 3)
	checkInvariants(t, s)
	if got := strings.ReplaceAll(s.Text(-1), "\n", ""); !strings.Contains(got, "abc") || strings.Count(got, "中") != 2 {
		t.Fatalf("after the resizes the screen reads %q", s.Text(-1))
	}
}
