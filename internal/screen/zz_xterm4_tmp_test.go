package screen_test

import (
	"os"
	"strconv"
	"testing"

	_ "termkeep/internal/screen"
)

func TestTmpSteps(t *testing.T) {
	seed, _ := strconv.Atoi(os.Getenv("BSEED"))
	k, _ := strconv.Atoi(os.Getenv("BLEN"))
	data, chunks, resizes, cols, rows := randomStream(int64(seed), streamLen())
	dir := t.TempDir()
	var paths []string
	var cases []corpusCase
	for nr := 0; nr <= len(resizes); nr++ {
		var c corpusCase
		c.Name = "s" + strconv.Itoa(nr)
		c.Cols, c.Rows, c.Data = cols, rows, data[:k]
		off := 0
		for _, n := range chunks {
			if off+n >= k {
				c.Chunks = append(c.Chunks, k-off)
				break
			}
			c.Chunks = append(c.Chunks, n)
			off += n
		}
		for _, r := range resizes[:nr] {
			if r[0] <= k {
				c.Resizes = append(c.Resizes, corpusResize{At: r[0], Cols: r[1], Rows: r[2]})
			}
		}
		p, _ := writeCaseFile(dir, c.Name, c)
		paths = append(paths, p)
		cases = append(cases, c)
	}
	got, err := runXterm(t, paths)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		m, _ := modelDump(c)
		t.Logf("resizes %v cursor x %+v m %+v", c.Resizes, got[i].Cursor, m.Cursor)
		t.Logf("xterm: sb %q\n screen %q", render(got[i].Scrollback), render(got[i].Screen))
		t.Logf("model: sb %q\n screen %q", render(m.Scrollback), render(m.Screen))
	}
}
