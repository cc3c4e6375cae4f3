package outerterm

import (
	"strconv"
	"strings"

	"termkeep/internal/predict"
	"termkeep/internal/screen"
)

// Predictive echo (package predict) needs the cursor and the cells under
// what it predicts, which the bytes passing through do not say. While
// attach predicts, the Term feeds its screen model all the time (Track),
// not only while the sizes differ; without prediction the model is fed
// only then, and prediction costs nothing. Predicted cells are drawn
// over the session's, underlined (as mosh draws them), between a save
// and a restore of the cursor (DECSC, DECRC: its position and pen), and
// erased before anything else reaches the terminal: the session's
// output always lands on the terminal as the session left it. The one
// thing a prediction cannot put back is a position the session itself
// saved with DECSC before it and restores after it (the model does not
// say what it saved); a program reading a line at a prompt holds none.

// Track makes the model follow the output whatever the sizes, from the
// next snapshot on (the model starts from one).
func (t *Term) Track() {
	t.track = true
}

// Predictable reports whether predictions can be drawn now: the model
// follows the output and the terminal shows the session as it is (not
// drawn from the model at another size).
func (t *Term) Predictable() bool { return t.track && t.fed && !t.rendered() }

// PredictModes returns what the terminal's screen says of prediction: the
// alternate screen is shown, the program tracks the mouse.
func (t *Term) PredictModes() (altScreen, mouse bool) {
	m := t.m.private
	return t.model != nil && t.model.AltScreen(), m[9] || m[1000] || m[1002] || m[1003]
}

// PredictScreen returns the screen the predictor reads: rows count from
// the first line the model ever had, so that they stay put as it scrolls.
// It is valid until the next output.
func (t *Term) PredictScreen() predict.Screen {
	t.look = modelScreen{t: t}
	return &t.look
}

type modelScreen struct {
	t    *Term
	dump *screen.Dump
}

func (s *modelScreen) Cursor() (row, col int) {
	x, y := s.t.model.CursorPosition()
	return int(s.t.model.Scrolled()) + y, x
}

func (s *modelScreen) Cols() int { c, _ := s.t.model.Size(); return c }

func (s *modelScreen) Cell(row, col int) string {
	c, ok := s.cell(row, col)
	if !ok {
		return "\x00" // scrolled away: no prediction matches it
	}
	return c.Ch
}

func (s *modelScreen) cell(row, col int) (screen.DumpCell, bool) {
	y := row - int(s.t.model.Scrolled())
	if s.dump == nil {
		d := s.t.model.Dump(0)
		s.dump = &d
	}
	if y < 0 || y >= len(s.dump.Screen) || col < 0 || col >= s.dump.Cols {
		return screen.DumpCell{}, false
	}
	if cells := s.dump.Screen[y].Cells; col < len(cells) {
		return cells[col], true
	}
	return screen.DumpCell{Ch: " ", W: 1}, true
}

// DrawPrediction returns what draws v over the terminal (after an
// ErasePrediction): its cells underlined, and the cursor where v puts it.
func (t *Term) DrawPrediction(v predict.View) []byte {
	if !t.Predictable() || len(v.Cells) == 0 && !v.Cursor {
		return nil
	}
	top := int(t.model.Scrolled())
	var b []byte
	b = append(b, "\x1b7"...)
	for _, c := range v.Cells {
		y := c.Row - top
		if y < 0 || y >= t.rows || c.Col < 0 || c.Col >= t.cols {
			continue
		}
		b = cup(b, y, c.Col)
		b = append(b, "\x1b[0;4m"...)
		b = append(b, c.Char...)
		t.drawn = append(t.drawn, predict.Cell{Row: c.Row, Col: c.Col})
	}
	if v.Cursor && v.CursorRow-top >= 0 && v.CursorRow-top < t.rows {
		t.moved = true // DECRC when erased
		return cup(b, v.CursorRow-top, v.CursorCol)
	}
	return append(b, "\x1b8"...)
}

// ErasePrediction returns what puts the terminal back as the session
// drew it: the predicted cells drawn as the model has them, the cursor
// and the pen restored.
func (t *Term) ErasePrediction() []byte {
	if len(t.drawn) == 0 && !t.moved {
		return nil
	}
	var b []byte
	if t.moved {
		b = append(b, "\x1b8"...)
	}
	if len(t.drawn) > 0 {
		s := modelScreen{t: t}
		top := int(t.model.Scrolled())
		b = append(b, "\x1b7"...)
		for _, c := range t.drawn {
			cell, ok := s.cell(c.Row, c.Col)
			if !ok || cell.W != 1 {
				continue // scrolled away, or half of a wide character: redrawn by what changed it
			}
			b = cup(b, c.Row-top, c.Col)
			b = sgr(b, cell)
			b = append(b, cell.Ch...)
		}
		b = append(b, "\x1b8"...)
	}
	t.drawn, t.moved = t.drawn[:0], false
	return b
}

// cup appends a cursor move to row y, column x (from 0).
func cup(b []byte, y, x int) []byte {
	b = append(b, "\x1b["...)
	b = strconv.AppendInt(b, int64(y+1), 10)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(x+1), 10)
	return append(b, 'H')
}

// sgr appends the SGR that draws c's colors and attributes.
func sgr(b []byte, c screen.DumpCell) []byte {
	b = append(b, "\x1b[0"...)
	for _, f := range c.F {
		if i := strings.IndexRune("bdiukrhso", f); i >= 0 {
			b = append(b, ';')
			b = strconv.AppendInt(b, int64([]int{1, 2, 3, 4, 5, 7, 8, 9, 53}[i]), 10)
		}
	}
	b = color(b, c.Fg, 38)
	b = color(b, c.Bg, 48)
	return append(b, 'm')
}

func color(b []byte, c string, base int) []byte {
	switch {
	case strings.HasPrefix(c, "p"):
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(base), 10)
		return append(append(b, ";5;"...), c[1:]...)
	case len(c) == 7 && c[0] == '#':
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(base), 10)
		b = append(b, ";2"...)
		for i := 1; i < 7; i += 2 {
			v, _ := strconv.ParseUint(c[i:i+2], 16, 8)
			b = append(b, ';')
			b = strconv.AppendUint(b, v, 10)
		}
	}
	return b
}
