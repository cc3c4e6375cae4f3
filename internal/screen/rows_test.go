package screen

import (
	"math/rand"
	"testing"
)

// TestRollUp checks the sliding window of rows against moving the rows
// one by one, on random scrolls of random regions, with the rows
// replaced now and then as a resize or a checkpoint replaces them.
func TestRollUp(t *testing.T) {
	for _, rows := range []int{1, 2, 3, 24, 50} {
		r := rand.New(rand.NewSource(int64(rows)))
		var b buffer
		tag := 0
		newRows := func(n, spare int) []line {
			ls := make([]line, n, n+spare)
			for i := range ls {
				tag++
				ls[i].blankFrom = int32(tag)
			}
			return ls
		}
		b.lines = newRows(rows, 0)
		want := append([]line(nil), b.lines...)
		for step := 0; step < 5000; step++ {
			switch k := r.Intn(100); {
			case k == 0: // replaced, with room after them that is not the window's
				b.lines = newRows(rows, r.Intn(3))
				want = append(want[:0], b.lines...)
			default:
				top, bottom := 0, rows-1
				if k < 20 {
					top = r.Intn(rows)
					bottom = top + r.Intn(rows-top)
				}
				tag++
				l := line{blankFrom: int32(tag)}
				b.rollUp(top, bottom, l)
				copy(want[top:bottom], want[top+1:bottom+1])
				want[bottom] = l
			}
			if len(b.lines) != rows {
				t.Fatalf("%d rows: step %d: %d rows", rows, step, len(b.lines))
			}
			for y := range want {
				if b.lines[y].blankFrom != want[y].blankFrom {
					t.Fatalf("%d rows: step %d: row %d is %d, want %d", rows, step, y, b.lines[y].blankFrom, want[y].blankFrom)
				}
			}
		}
	}
}

// TestScrollMovesNoRows checks that scrolling the whole screen slides the
// rows instead of copying each one up: the screen's second row becomes
// its first where it lies.
func TestScrollMovesNoRows(t *testing.T) {
	s := New(20, 5, Options{})
	s.Write([]byte("1\r\n2\r\n3\r\n4\r\n5\r\n6")) // the window is set up
	b := s.cur
	second := &b.lines[1]
	s.Write([]byte("\r\n7"))
	if &b.lines[0] != second {
		t.Errorf("the rows were copied up, not slid")
	}
	if got := s.Dump(-1).Screen[0].Text(); got != "3" {
		t.Errorf("first row %q, want 3", got)
	}
}

// TestFillCells checks fillCells on rows of every length around the
// steps of its copies, blank and not.
func TestFillCells(t *testing.T) {
	for _, c := range []cell{blankCell, {c: 'x' | w1, s: 7}, {c: w1, s: 3}} {
		for n := 0; n < 600; n++ {
			row := make([]cell, n+2)
			fillCells(row[1:n+1], c)
			for i, got := range row {
				want := c
				if i == 0 || i == n+1 {
					want = cell{}
				}
				if got != want {
					t.Fatalf("%#v, length %d: cell %d is %#v", c, n, i, got)
				}
			}
		}
	}
}
