package screen

type GoldenCase struct {
	Name       string
	Cols, Rows int
	Data       []byte
	Chunks     []int
	Resizes    [][3]int
}

func GoldenCases() []GoldenCase {
	var out []GoldenCase
	for _, g := range allInputs() {
		c := GoldenCase{Name: g.name, Cols: g.cols, Rows: g.rows}
		c.Data = append(c.Data, g.in...)
		if len(g.in) > 0 {
			c.Chunks = append(c.Chunks, len(g.in))
		}
		for _, st := range g.steps {
			if st.cols > 0 {
				c.Resizes = append(c.Resizes, [3]int{len(c.Data), st.cols, st.rows})
				continue
			}
			c.Data = append(c.Data, st.in...)
			c.Chunks = append(c.Chunks, len(st.in))
		}
		out = append(out, c)
	}
	return out
}

func SnapshotOf(c GoldenCase) []byte {
	s := New(c.Cols, c.Rows, Options{})
	off := 0
	ri := 0
	for _, n := range c.Chunks {
		for ri < len(c.Resizes) && c.Resizes[ri][0] == off {
			s.Resize(c.Resizes[ri][1], c.Resizes[ri][2])
			ri++
		}
		s.Write(c.Data[off : off+n])
		off += n
	}
	for ; ri < len(c.Resizes); ri++ {
		s.Resize(c.Resizes[ri][1], c.Resizes[ri][2])
	}
	return s.Snapshot(-1)
}
