package screen

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

func TestDbgSnap2(t *testing.T) {
	seed, _ := strconv.Atoi(os.Getenv("DSEED"))
	data, chunks, resizes, cols, rows := RandomStream(int64(seed), 1500)
	fmt.Println(chunks, resizes, cols, rows)
	var a, b Dump
	_ = a
	_ = b
	s := New(cols, rows, Options{})
	off, ri := 0, 0
	for _, n := range chunks {
		end := off + n
		for ri < len(resizes) && resizes[ri][0] < end {
			s.Write(data[off:resizes[ri][0]])
			off = resizes[ri][0]
			s.Resize(resizes[ri][1], resizes[ri][2])
			ri++
		}
		s.Write(data[off:end])
		off = end
	}
	for ; ri < len(resizes); ri++ {
		s.Resize(resizes[ri][1], resizes[ri][2])
	}
	for y, l := range s.cur.lines {
		fmt.Printf("%d w=%v %q\n", y, l.wrapped, s.text1(&l))
		for x, c := range l.cells {
			st := s.styles.get(c.s)
			fmt.Printf("   %d:%q/%d fg=%x bg=%x\n", x, s.cellString(c), c.width(), st.fg, st.bg)
		}
	}
	fmt.Println(s.cur.x, s.cur.y, s.cur == s.alt, s.prevWidth, s.modes, s.charset, s.gsets, s.glevel)
	fmt.Printf("%q\n", s.Snapshot(-1))
}
