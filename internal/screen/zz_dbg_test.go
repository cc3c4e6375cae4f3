package screen

import (
	"fmt"
	"testing"
)

func TestDbgSnap(t *testing.T) {
	data, chunks, _, cols, rows := RandomStream(1312, 300)
	s := New(cols, rows, Options{})
	off := 0
	for _, n := range chunks {
		s.Write(data[off : off+n])
		off += n
	}
	for i := 0; i < s.sb.len(); i++ {
		var l line
		s.decodeLine(s.sb.line(i), s.cols, &l)
		fmt.Printf("sb %d w=%v %q\n", i, l.wrapped, s.text1(&l))
		for x, c := range l.cells {
			st := s.styles.get(c.s)
			if c.s != 0 {
				fmt.Printf("  %d:%q/%d fg=%x bg=%x exact=%v\n", x, s.cellString(c), c.width(), st.fg, st.bg, s.exactCell(l.cells, x, false))
			}
		}
	}
	fmt.Printf("%q\n", s.Snapshot(-1))
}

func (s *Screen) text1(l *line) string { return string(s.appendText(nil, l, false)) }
