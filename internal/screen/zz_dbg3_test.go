package screen

import (
	"encoding/json"
	"os"
	"testing"
)

func TestDbgWriteCase(t *testing.T) {
	data, chunks, resizes, cols, rows := RandomStream2(5126, 2000)
	k := 1859
	data = data[:k]
	var ch []int
	off := 0
	for _, n := range chunks {
		if off+n >= k {
			ch = append(ch, k-off)
			break
		}
		ch = append(ch, n)
		off += n
	}
	var rs [][3]int
	for _, r := range resizes {
		if r[0] <= k {
			rs = append(rs, r)
		}
	}
	os.WriteFile("/tmp/case.bin", data, 0o644)
	j, _ := json.Marshal(map[string]any{"chunks": ch, "resizes": rs, "cols": cols, "rows": rows})
	os.WriteFile("/tmp/case.json", j, 0o644)
}
