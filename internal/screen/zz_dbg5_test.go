package screen

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func TestDbgReplay(t *testing.T) {
	var spec struct {
		Chunks  []int    `json:"chunks"`
		Resizes [][3]int `json:"resizes"`
		Cols    int      `json:"cols"`
		Rows    int      `json:"rows"`
	}
	j, _ := os.ReadFile("/tmp/case.json")
	json.Unmarshal(j, &spec)
	data, _ := os.ReadFile("/tmp/case.bin")
	s := New(spec.Cols, spec.Rows, Options{ScrollbackLines: 100000})
	pr := func(label string) {
		b := s.cur
		fmt.Println(label, s.cur == s.alt, "x", b.x, "y", b.y, "ybase", s.ybase(), "cols", s.cols, "rows", s.rows, "maxLen", b.maxLen)
		for i, l := range b.hidden {
			fmt.Printf("    h%d %v %d %q\n", i, l.wrapped, len(l.cells), s.text1(&l))
		}
		for y := range b.lines {
			fmt.Printf("    %d %v %d %q\n", y, b.lines[y].wrapped, len(b.lines[y].cells), s.text1(&b.lines[y]))
		}
	}
	cuts := map[int]bool{}
	off := 0
	for _, n := range spec.Chunks {
		off += n
		cuts[off] = true
	}
	for _, r := range spec.Resizes {
		cuts[r[0]] = true
	}
	var keys []int
	for k := range cuts {
		keys = append(keys, k)
	}
	sortInts(keys)
	start, ri := 0, 0
	for _, end := range keys {
		if end > start {
			s.Write(data[start:end])
			start = end
		}
		for ri < len(spec.Resizes) && spec.Resizes[ri][0] == end {
			if ri == len(spec.Resizes)-1 {
				pr("before")
			}
			s.Resize(spec.Resizes[ri][1], spec.Resizes[ri][2])
			ri++
		}
	}
	pr("end")
}

func sortInts(a []int) {
	for i := range a {
		for j := i + 1; j < len(a); j++ {
			if a[j] < a[i] {
				a[i], a[j] = a[j], a[i]
			}
		}
	}
}
