package screen

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func TestDbgRep(t *testing.T) {
	data, chunks, resizes, cols, rows := RandomStream(21101, 1500)
	data = data[:1453]
	os.WriteFile("/tmp/case.bin", data, 0o644)
	// chunks up to 1453
	var ch []int
	off := 0
	for _, n := range chunks {
		if off+n >= 1453 {
			ch = append(ch, 1453-off)
			break
		}
		ch = append(ch, n)
		off += n
	}
	j, _ := json.Marshal(map[string]any{"chunks": ch, "resizes": resizes, "cols": cols, "rows": rows})
	os.WriteFile("/tmp/case.json", j, 0o644)
	s := New(cols, rows, Options{})
	off, ri := 0, 0
	for _, n := range ch {
		end := off + n
		for ri < len(resizes) && resizes[ri][0] < end {
			s.Write(data[off:resizes[ri][0]])
			off = resizes[ri][0]
			s.Resize(resizes[ri][1], resizes[ri][2])
			ri++
		}
		if end == 1453 {
			s.Write(data[off : end-1])
			fmt.Println("before b: x", s.cur.x, "y", s.cur.y, "pw", s.prevWidth, "sb", s.sb.len(), "alt", s.cur == s.alt)
			s.Write(data[end-1 : end])
		} else {
			s.Write(data[off:end])
		}
		off = end
	}
	fmt.Println("after: x", s.cur.x, "y", s.cur.y, "sb", s.sb.len())
}
