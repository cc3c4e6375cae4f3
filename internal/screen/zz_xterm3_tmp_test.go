package screen_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"termkeep/internal/screen"
)

// bisect: find the shortest prefix of a random case where the model and xterm.js differ.
func TestTmpBisect(t *testing.T) {
	seed, _ := strconv.Atoi(os.Getenv("BSEED"))
	data, chunks, resizes, cols, rows := randomStream(int64(seed), streamLen())
	dir := t.TempDir()
	var paths []string
	var cases []corpusCase
	for k := 1; k <= len(data); k++ {
		var c corpusCase
		c.Name = "p" + strconv.Itoa(k)
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
		for _, r := range resizes {
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
		if d := dumpDiff(&got[i], &m, true, 8); d != nil {
			t.Errorf("first difference at %d bytes (resizes %v, chunks %v): %q\n  %s", len(c.Data), c.Resizes, c.Chunks, c.Data, strings.Join(d, "\n  "))
			prev := got[i-1]
			t.Logf("xterm before: %q", render(prev.Screen))
			t.Logf("xterm after: sb %q\n screen %q", render(got[i].Scrollback), render(got[i].Screen))
			t.Logf("model after: sb %q\n screen %q", render(m.Scrollback), render(m.Screen))
			return
		}
	}
}

func render(lines []screen.DumpLine) string {
	var rows []string
	for _, l := range lines {
		r := l.Text()
		if l.Wrapped {
			r = "~" + r
		}
		rows = append(rows, r)
	}
	return strings.Join(rows, "|")
}
