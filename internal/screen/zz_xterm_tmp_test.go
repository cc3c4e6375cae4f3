package screen_test

import (
	"strings"
	"testing"

	"termkeep/internal/screen"
)

func TestTmpGoldenVsXterm(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	var cases []corpusCase
	gs := screen.GoldenCases()
	for _, g := range gs {
		var c corpusCase
		c.Name = g.Name
		c.Cols, c.Rows, c.Data, c.Chunks = g.Cols, g.Rows, g.Data, g.Chunks
		for _, r := range g.Resizes {
			c.Resizes = append(c.Resizes, corpusResize{At: r[0], Cols: r[1], Rows: r[2]})
		}
		p, err := writeCaseFile(dir, g.Name, c)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		cases = append(cases, c)
	}
	for _, g := range gs {
		var c corpusCase
		c.Cols, c.Rows = g.Cols, g.Rows
		if len(g.Resizes) > 0 {
			c.Cols, c.Rows = g.Resizes[len(g.Resizes)-1][1], g.Resizes[len(g.Resizes)-1][2]
		}
		if c.Cols < 2 {
			c.Cols = 2
		}
		c.Data = screen.SnapshotOf(g)
		p, err := writeCaseFile(dir, g.Name+"-snap", c)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	got, err := runXterm(t, paths)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		m, err := modelDump(c)
		if err != nil {
			t.Fatal(err)
		}
		if d := dumpDiff(&got[i], &m, true, 10); d != nil {
			t.Errorf("%s: model differs from xterm.js:\n  %s", c.Name, strings.Join(d, "\n  "))
		}
		sn := got[len(cases)+i]
		if d := screen.Diff(&got[i], &sn, 10); d != nil {
			t.Errorf("%s: xterm.js fed the snapshot differs from xterm.js fed the stream:\n  %s\n%q", c.Name, strings.Join(d, "\n  "), screen.SnapshotOf(gs[i]))
		}
	}
}
