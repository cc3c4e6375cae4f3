package screen

import (
	"fmt"
	"strings"
)

// Dump is a terminal's state in the one form that termkeep's model, the
// xterm.js reference (internal/screen/testdata/xterm/dump.mjs) and tmux can
// all print, so differential tests compare them field by field. It is a
// test and debugging aid; snapshots and checkpoints do not use it.
type Dump struct {
	Cols   int        `json:"cols"`
	Rows   int        `json:"rows"`
	Cursor DumpCursor `json:"cursor"`
	// Alt is set while the alternate buffer is active.
	Alt   bool      `json:"alt"`
	Title string    `json:"title"`
	Modes DumpModes `json:"modes"`
	// Scrollback holds the lines above the screen, oldest first (of the
	// normal buffer; the alternate buffer has none).
	Scrollback []DumpLine `json:"scrollback"`
	// Screen holds exactly Rows lines of the active buffer, top first.
	Screen []DumpLine `json:"screen"`
}

// DumpCursor is the cursor: X in [0, Cols-1] (a cursor in the pending-wrap
// state after writing the last column reports Cols-1), Y in [0, Rows-1]
// relative to the top of the screen.
type DumpCursor struct {
	X       int  `json:"x"`
	Y       int  `json:"y"`
	Visible bool `json:"visible"`
}

// DumpModes are the modes a snapshot must carry, named as xterm.js names them.
type DumpModes struct {
	ApplicationCursorKeys bool   `json:"applicationCursorKeys"` // DECCKM, ?1
	Wraparound            bool   `json:"wraparound"`            // DECAWM, ?7
	Insert                bool   `json:"insert"`                // IRM, 4
	Origin                bool   `json:"origin"`                // DECOM, ?6
	BracketedPaste        bool   `json:"bracketedPaste"`        // ?2004
	SendFocus             bool   `json:"sendFocus"`             // ?1004
	MouseTracking         string `json:"mouseTracking"`         // "none", "x10" (?9), "vt200" (?1000), "drag" (?1002), "any" (?1003)
}

// DumpLine is one row. Wrapped is set when the row continues the row above
// it (it was reached by auto-wrap, not by a line feed), as xterm.js's
// IBufferLine.isWrapped.
type DumpLine struct {
	Wrapped bool       `json:"w,omitempty"`
	Cells   []DumpCell `json:"c"`
}

// DumpCell is one column. Ch holds the characters (a base character and any
// combining marks appended to it); a wide character has W 2 and is followed
// by a cell with W 0 and Ch "". A blank cell has Ch " ".
//
// Fg and Bg are "" (default), "p<N>" (palette 0–255) or "#rrggbb". F lists
// the attributes set, in the order "bdiukrhso": bold, dim, italic,
// underline, blink, inverse, hidden (invisible), strikethrough, overline.
type DumpCell struct {
	Ch string `json:"ch"`
	W  int    `json:"w"`
	Fg string `json:"fg,omitempty"`
	Bg string `json:"bg,omitempty"`
	F  string `json:"f,omitempty"`
}

// Normalize puts a dump in the canonical form used for comparison: "" in a
// width-1 cell becomes " ", and trailing cells that are blank with default
// colors and no attributes are trimmed from every line.
func (d *Dump) Normalize() {
	norm := func(lines []DumpLine) {
		for i := range lines {
			c := lines[i].Cells
			for j := range c {
				if c[j].Ch == "" && c[j].W == 1 {
					c[j].Ch = " "
				}
			}
			n := len(c)
			for n > 0 && c[n-1] == (DumpCell{Ch: " ", W: 1}) {
				n--
			}
			lines[i].Cells = c[:n]
		}
	}
	norm(d.Scrollback)
	norm(d.Screen)
}

// Text returns a line's characters with trailing blanks trimmed.
func (l DumpLine) Text() string {
	var b strings.Builder
	for _, c := range l.Cells {
		if c.W == 0 {
			continue
		}
		b.WriteString(c.Ch)
	}
	return strings.TrimRight(b.String(), " ")
}

// Diff returns the differences between two normalized dumps, at most max of
// them, as lines a person can read; nil when they are equal. Scrollback is
// compared over the lines both have, counted from the screen upward.
func Diff(want, got *Dump, max int) []string {
	var out []string
	add := func(format string, args ...any) bool {
		if len(out) < max {
			out = append(out, fmt.Sprintf(format, args...))
		}
		return len(out) < max
	}
	if want.Cols != got.Cols || want.Rows != got.Rows {
		add("size: want %dx%d, got %dx%d", want.Cols, want.Rows, got.Cols, got.Rows)
	}
	if want.Cursor != got.Cursor {
		add("cursor: want %+v, got %+v", want.Cursor, got.Cursor)
	}
	if want.Alt != got.Alt {
		add("alt buffer: want %v, got %v", want.Alt, got.Alt)
	}
	if want.Title != got.Title {
		add("title: want %q, got %q", want.Title, got.Title)
	}
	if want.Modes != got.Modes {
		add("modes: want %+v, got %+v", want.Modes, got.Modes)
	}
	cmpLines := func(what string, a, b []DumpLine) {
		for i := 0; i < len(a) && i < len(b); i++ {
			if diff := lineDiff(a[i], b[i]); diff != "" {
				if !add("%s line %d: %s\n  want %q\n  got  %q", what, i, diff, a[i].Text(), b[i].Text()) {
					return
				}
			}
		}
		if len(a) != len(b) {
			add("%s: want %d lines, got %d", what, len(a), len(b))
		}
	}
	cmpLines("screen", want.Screen, got.Screen)
	// Scrollback: align at the bottom (the lines nearest the screen).
	n := min(len(want.Scrollback), len(got.Scrollback))
	cmpLines("scrollback (from the end)", want.Scrollback[len(want.Scrollback)-n:], got.Scrollback[len(got.Scrollback)-n:])
	return out
}

func lineDiff(a, b DumpLine) string {
	if a.Wrapped != b.Wrapped {
		return fmt.Sprintf("wrapped: want %v, got %v", a.Wrapped, b.Wrapped)
	}
	for i := 0; i < len(a.Cells) || i < len(b.Cells); i++ {
		var ca, cb DumpCell
		if i < len(a.Cells) {
			ca = a.Cells[i]
		} else {
			ca = DumpCell{Ch: " ", W: 1}
		}
		if i < len(b.Cells) {
			cb = b.Cells[i]
		} else {
			cb = DumpCell{Ch: " ", W: 1}
		}
		if ca != cb {
			return fmt.Sprintf("column %d: want %+v, got %+v", i, ca, cb)
		}
	}
	return ""
}
