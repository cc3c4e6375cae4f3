package outerterm

import (
	"reflect"
	"testing"

	"termkeep/internal/predict"
	"termkeep/internal/screen"
)

// A prediction drawn over the terminal and erased leaves it exactly as the
// session drew it, cells, colours, cursor and pen: what the session writes
// next lands as it would have without the prediction. While drawn, the
// predicted cells are underlined and the cursor is where they put it.
func TestPredictionDrawnAndErased(t *testing.T) {
	term := screen.New(40, 5, screen.Options{})    // the outer terminal
	session := screen.New(40, 5, screen.Options{}) // the session's own screen
	ot := New(40, 5, false)
	ot.Track()
	write := func(b []byte) { term.Write(b) }
	write(ot.Session(40, 5))
	write(ot.Snapshot([]byte("\x1bc")))
	if !ot.Predictable() {
		t.Fatal("a tracking Term at the session's size cannot predict after a snapshot")
	}
	out := func(s string) {
		session.Write([]byte(s))
		write(ot.ErasePrediction())
		write(ot.Output([]byte(s)))
	}
	// A coloured prompt, a pen left bold red, and a cell under the
	// prediction that is not blank (a backspace over it).
	out("\x1b[32m$\x1b[m \x1b[44mab\x1b[1;31m")
	scr := ot.PredictScreen()
	row, col := scr.Cursor()
	if col != 4 || scr.Cell(row, 3) != "b" || scr.Cols() != 40 {
		t.Fatalf("the predictor reads the cursor at %d,%d and %q under it", row, col, scr.Cell(row, 3))
	}
	v := predict.View{Cells: []predict.Cell{{Row: row, Col: 3, Char: "x"}, {Row: row, Col: 4, Char: "y"}}, Cursor: true, CursorRow: row, CursorCol: 5}
	write(ot.DrawPrediction(v))
	d := term.Dump(0)
	if got := d.Screen[0].Cells[3]; got.Ch != "x" || got.F != "u" {
		t.Errorf("a predicted cell is drawn %+v, not x underlined", got)
	}
	if d.Cursor.X != 5 {
		t.Errorf("the cursor is at column %d, not where the prediction puts it (5)", d.Cursor.X)
	}
	write(ot.ErasePrediction())
	if got, want := term.Dump(0), session.Dump(0); !reflect.DeepEqual(got, want) {
		t.Errorf("erased, the terminal is\n%+v\nnot the session's\n%+v", got, want)
	}
	// The session's next output in its own pen (bold red), where it left the cursor.
	write(ot.DrawPrediction(v))
	out("z")
	if got, want := term.Dump(0), session.Dump(0); !reflect.DeepEqual(got, want) {
		t.Errorf("after output, the terminal is\n%+v\nnot the session's\n%+v", got, want)
	}
	if ot.ErasePrediction() != nil {
		t.Error("nothing is drawn, yet erasing writes")
	}
}

// Without Track the model is fed only while the sizes differ: prediction
// costs a Term nothing.
func TestNoTrackNoModel(t *testing.T) {
	ot := New(40, 5, false)
	ot.Session(40, 5)
	ot.Snapshot([]byte("\x1bc"))
	ot.Output([]byte("hello"))
	if ot.fed || ot.Predictable() {
		t.Error("the model follows the output without Track")
	}
	if b := ot.DrawPrediction(predict.View{Cells: []predict.Cell{{Char: "x"}}}); b != nil {
		t.Errorf("drawn without Track: %q", b)
	}
}

// A tracking Term keeps following the output through a spell at another
// size than the session's (drawn from the model, no prediction then), and
// predicts again once the sizes agree, without a new snapshot.
func TestTrackThroughASizeChange(t *testing.T) {
	ot := New(40, 5, false)
	ot.Track()
	ot.Session(40, 5)
	ot.Snapshot([]byte("\x1bc$ "))
	ot.Resize(30, 5)
	if ot.Predictable() || ot.Redraw {
		t.Fatalf("at another size: predictable %v, a snapshot asked for %v", ot.Predictable(), ot.Redraw)
	}
	ot.Output([]byte("ab"))
	ot.Resize(40, 5)
	if !ot.Predictable() || ot.Redraw {
		t.Fatalf("at the session's size again: predictable %v, a snapshot asked for %v", ot.Predictable(), ot.Redraw)
	}
	ot.Output([]byte("c"))
	scr := ot.PredictScreen()
	if row, col := scr.Cursor(); col != 5 || scr.Cell(row, 4) != "c" {
		t.Errorf("the model has the cursor at %d,%d and %q before it; want column 5 after \"$ abc\"", row, col, scr.Cell(row, 4))
	}
}
