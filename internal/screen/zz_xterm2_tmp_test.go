package screen_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"termkeep/internal/screen"
)

func TestTmpRandomVsXterm(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("NCASES"))
	if n == 0 {
		n = 200
	}
	base, _ := strconv.Atoi(os.Getenv("SEED"))
	dir := t.TempDir()
	var paths []string
	var cases []corpusCase
	for i := 0; i < n; i++ {
		data, chunks, resizes, cols, rows := randomStream(int64(base+i), streamLen())
		var c corpusCase
		c.Name = "r" + strconv.Itoa(base+i)
		c.Cols, c.Rows, c.Data, c.Chunks = cols, rows, data, chunks
		for _, r := range resizes {
			c.Resizes = append(c.Resizes, corpusResize{At: r[0], Cols: r[1], Rows: r[2]})
		}
		p, err := writeCaseFile(dir, c.Name, c)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		cases = append(cases, c)
	}
	for _, c := range cases {
		snap, _ := modelSnapshot(c)
		fc, fr := c.finalSize()
		if fc < 2 {
			fc = 2
		}
		var sc corpusCase
		sc.Cols, sc.Rows, sc.Data = fc, fr, snap
		p, _ := writeCaseFile(dir, c.Name+"-snap", sc)
		paths = append(paths, p)
	}
	got, err := runXterm(t, paths)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, c := range cases {
		m, err := modelDump(c)
		if err != nil {
			t.Fatal(err)
		}
		if d := dumpDiff(&got[i], &m, true, 6); d != nil {
			bad++
			if bad < 6 {
				t.Errorf("%s (%dx%d chunks %v resizes %v) %q:\n  %s", c.Name, c.Cols, c.Rows, c.Chunks, c.Resizes, c.Data, strings.Join(d, "\n  "))
			}
			continue
		}
		sn := got[len(cases)+i]
		xw := got[i]
		data, chunks, resizes, cols, rows := randomStream(int64(base+i), streamLen())
		screen.MaskBoth(data, chunks, resizes, cols, rows, &xw, &sn)
		if d := screen.Diff(&xw, &sn, 6); d != nil {
			bad++
			if bad < 6 {
				t.Errorf("%s: snapshot in xterm differs (%dx%d chunks %v resizes %v) %q:\n  %s", c.Name, c.Cols, c.Rows, c.Chunks, c.Resizes, c.Data, strings.Join(d, "\n  "))
			}
		}
	}
	t.Logf("%d of %d differ", bad, len(cases))
}

func streamLen() int {
	if n, _ := strconv.Atoi(os.Getenv("LEN")); n > 0 {
		return n
	}
	return 300
}

func randomStream(seed int64, n int) ([]byte, []int, [][3]int, int, int) {
	if os.Getenv("GEN") == "2" {
		return screen.RandomStream2(seed, n)
	}
	return screen.RandomStream(seed, n)
}
