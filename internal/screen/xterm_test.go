package screen_test

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"termkeep/internal/screen"
)

// The differential tests: every recorded stream of testdata/corpus goes
// through the screen model and through xterm.js (the emulator in the
// browser, which the model must match), and the two dumps must be equal.
// To see xterm.js's dump of one case:
//
//	node web/test/xterm-dump.mjs internal/screen/testdata/corpus/vim.json

// maxDiffs bounds the differences reported for one case.
const maxDiffs = 15

func TestXtermDifferential(t *testing.T) {
	cases := loadCorpus(t)
	want := corpusXtermDumps(t, cases)
	var ran int
	var differ []string
	for _, c := range cases {
		ok := t.Run(c.Name, func(t *testing.T) {
			ran++
			got, err := modelDump(c)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			w := want[c.Name]
			if diffs := dumpDiff(&w, &got, true, maxDiffs); diffs != nil {
				t.Errorf("%s: the model's Dump(-1) differs from xterm.js's\n(case: %s)\n  %s",
					c.Name, c.Source, strings.Join(diffs, "\n  "))
			}
		})
		if !ok {
			differ = append(differ, c.Name)
		}
	}
	t.Logf("%d of %d cases match xterm.js; differing: %v", ran-len(differ), ran, differ)
}

// TestSnapshotInXterm checks the model's snapshot where it matters: a
// fresh xterm.js of the same size that is fed Snapshot(-1) must show what
// an xterm.js fed the original stream shows (scrollback compared over the
// lines both have).
func TestSnapshotInXterm(t *testing.T) {
	cases := loadCorpus(t)
	want := corpusXtermDumps(t, cases)
	got, failed := snapshotsInXterm(t, cases, nil)
	compareSnapshots(t, cases, want, got, failed,
		"xterm.js fed the model's Snapshot(-1) differs from xterm.js fed the stream")
}

// continueProbe is output that a program could print next, made to show
// state a screen alone does not: the pending wrap and the pen (P), the
// character set (q is a line in DEC graphics), the saved cursor and its
// attributes (DECRC, R), the tab stops (T), and the scroll region (three
// line feeds from its bottom, S).
const continueProbe = "Pq\x1b8R\tT\x1b[99B\n\n\nS"

// TestSnapshotContinuesInXterm checks that a snapshot leaves the terminal
// in the state the stream left it in, not just showing the same screen:
// live output follows a snapshot, so xterm.js fed Snapshot(-1) and then
// continueProbe must show what xterm.js fed the stream and then the probe
// shows.
func TestSnapshotContinuesInXterm(t *testing.T) {
	cases := loadCorpus(t)
	dir := t.TempDir()
	probe := []byte(continueProbe)
	paths := make([]string, len(cases))
	for i, c := range cases {
		c.Data = append(slices.Clip(c.Data), probe...)
		if c.Chunks != nil {
			c.Chunks = append(slices.Clip(c.Chunks), len(probe))
		}
		p, err := writeCaseFile(dir, c.Name, c)
		if err != nil {
			t.Fatal(err)
		}
		paths[i] = p
	}
	dumps, err := runXterm(t, paths)
	if err != nil {
		t.Fatalf("xterm.js over the corpus and the probe: %v", err)
	}
	want := map[string]screen.Dump{}
	for i, c := range cases {
		want[c.Name] = dumps[i]
	}
	got, failed := snapshotsInXterm(t, cases, probe)
	compareSnapshots(t, cases, want, got, failed,
		"xterm.js fed the model's Snapshot(-1) and then "+strconv.Quote(continueProbe)+" differs from xterm.js fed the stream and then the same")
}

// snapshotsInXterm feeds each case to the model, takes Snapshot(-1), and
// returns xterm.js's dump of the snapshot followed by suffix, in a terminal
// of the case's final size; cases whose model failed are in failed.
func snapshotsInXterm(t *testing.T, cases []corpusCase, suffix []byte) (got map[string]screen.Dump, failed map[string]error) {
	t.Helper()
	dir := t.TempDir()
	var paths, names []string
	failed = map[string]error{}
	for _, c := range cases {
		snap, err := modelSnapshot(c)
		if err != nil {
			failed[c.Name] = err
			continue
		}
		cols, rows := c.finalSize()
		data := append(slices.Clip(snap), suffix...)
		p, err := writeCaseFile(dir, c.Name, corpusCase{Cols: cols, Rows: rows, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		names = append(names, c.Name)
	}
	got = map[string]screen.Dump{}
	if len(paths) > 0 {
		dumps, err := runXterm(t, paths)
		if err != nil {
			t.Fatalf("xterm.js over the snapshots: %v", err)
		}
		for i, n := range names {
			got[n] = dumps[i]
		}
	}
	return got, failed
}

// compareSnapshots reports, one subtest a case, where got differs from want.
func compareSnapshots(t *testing.T, cases []corpusCase, want, got map[string]screen.Dump, failed map[string]error, what string) {
	t.Helper()
	var ran int
	var differ []string
	for _, c := range cases {
		ok := t.Run(c.Name, func(t *testing.T) {
			ran++
			if err := failed[c.Name]; err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			w, g := want[c.Name], got[c.Name]
			if diffs := dumpDiff(&w, &g, false, maxDiffs); diffs != nil {
				t.Errorf("%s: %s\n(case: %s)\n  %s", c.Name, what, c.Source, strings.Join(diffs, "\n  "))
			}
		})
		if !ok {
			differ = append(differ, c.Name)
		}
	}
	t.Logf("%d of %d snapshots pass; differing: %v", ran-len(differ), ran, differ)
}

func modelSnapshot(c corpusCase) (snap []byte, err error) {
	s, err := runModel(c)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("Snapshot panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return s.Snapshot(-1), nil
}

// TestXtermDumperSanity checks the reference itself on streams whose
// screens can be worked out by hand, so that a broken dumper cannot pass
// for a broken model.
func TestXtermDumperSanity(t *testing.T) {
	type sanity struct {
		name       string
		cols, rows int
		data       string
		chunks     []int
		resizes    []corpusResize
		want       screen.Dump
	}
	cases := []sanity{
		{name: "crlf", cols: 10, rows: 3, data: "ab\r\nc",
			want: dump(10, 3, cur(1, 1), nil, txt("ab"), txt("c"), txt(""))},
		{name: "pending-wrap", cols: 5, rows: 2, data: "abcde",
			want: dump(5, 2, cur(4, 0), nil, txt("abcde"), txt(""))},
		{name: "autowrap", cols: 5, rows: 2, data: "abcdefg",
			want: dump(5, 2, cur(2, 1), nil, txt("abcde"), wrapped(txt("fg")))},
		{name: "scrollback", cols: 5, rows: 2, data: "1\r\n2\r\n3\r\n4",
			want: dump(5, 2, cur(1, 1), []screen.DumpLine{txt("1"), txt("2")}, txt("3"), txt("4"))},
		{name: "sgr", cols: 10, rows: 2,
			data: "\x1b[1;31;48;5;200mX\x1b[0;38;2;1;2;3;4;7mY\x1b[0m\r\n\x1b[1;2;3;4;5;7;8;9;53;91;107mZ\x1b[m",
			want: dump(10, 2, cur(1, 1), nil,
				line(cell("X", 1, "p1", "p200", "b"), cell("Y", 1, "#010203", "", "ur")),
				line(cell("Z", 1, "p9", "p15", "bdiukrhso")))},
		{name: "wide-and-combining", cols: 10, rows: 1, data: "中e\u0301",
			want: dump(10, 1, cur(3, 0), nil, line(cell("中", 2, "", "", ""), cell("", 0, "", "", ""), cell("e\u0301", 1, "", "", "")))},
		{name: "utf8-split-across-chunks", cols: 10, rows: 1, data: "a中b", chunks: []int{2, 1, 2},
			want: dump(10, 1, cur(4, 0), nil, line(cell("a", 1, "", "", ""), cell("中", 2, "", "", ""), cell("", 0, "", "", ""), cell("b", 1, "", "", "")))},
		{name: "erase-keeps-background", cols: 3, rows: 1, data: "abc\r\x1b[41m\x1b[2K",
			want: dump(3, 1, cur(0, 0), nil, line(cell(" ", 1, "", "p1", ""), cell(" ", 1, "", "p1", ""), cell(" ", 1, "", "p1", "")))},
		{name: "resize", cols: 10, rows: 3, data: "hello\r\nworld", resizes: []corpusResize{{At: 5, Cols: 20, Rows: 4}},
			want: dump(20, 4, cur(5, 1), nil, txt("hello"), txt("world"), txt(""), txt(""))},
		{name: "alt-modes-title", cols: 10, rows: 2,
			data: "1\r\n2\r\n3\x1b]2;hi\x07\x1b[?1049h\x1b[?25l\x1b[?1h\x1b[?2004h\x1b[?1004h\x1b[?1002h\x1b[4h\x1b[?7l\x1b[?6hA",
			want: func() screen.Dump {
				// The alternate screen shows "A"; the scrollback is the
				// normal buffer's.
				d := dump(10, 2, screen.DumpCursor{X: 1, Y: 0}, []screen.DumpLine{txt("1")}, txt("A"), txt(""))
				d.Alt, d.Title = true, "hi"
				d.Modes = screen.DumpModes{ApplicationCursorKeys: true, Insert: true, Origin: true,
					BracketedPaste: true, SendFocus: true, MouseTracking: "drag"}
				return d
			}()},
	}
	dir := t.TempDir()
	var paths []string
	for _, c := range cases {
		var sc corpusCase
		sc.Cols, sc.Rows, sc.Data, sc.Chunks, sc.Resizes = c.cols, c.rows, []byte(c.data), c.chunks, c.resizes
		p, err := writeCaseFile(dir, c.name, sc)
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
		want := c.want
		want.Normalize()
		if diffs := dumpDiff(&want, &got[i], true, maxDiffs); diffs != nil {
			t.Errorf("%s: the xterm.js dumper printed something other than the worked-out screen:\n  %s", c.name, strings.Join(diffs, "\n  "))
		}
	}
}

// TestCorpusSteps checks that a case is cut into writes at chunk
// boundaries and resize offsets, with each resize after the bytes before
// its offset (the dumper cuts the same way).
func TestCorpusSteps(t *testing.T) {
	c := corpusCase{Data: []byte("abcdefgh"), Chunks: []int{3, 5},
		Resizes: []corpusResize{{At: 0, Cols: 1, Rows: 1}, {At: 5, Cols: 2, Rows: 2}, {At: 5, Cols: 3, Rows: 3}, {At: 8, Cols: 4, Rows: 4}}}
	var got []string
	for _, s := range c.steps() {
		if s.Resize != nil {
			got = append(got, fmt.Sprintf("%dx%d", s.Resize.Cols, s.Resize.Rows))
		} else {
			got = append(got, string(s.Data))
		}
	}
	if want := "1x1 abc de 2x2 3x3 fgh 4x4"; strings.Join(got, " ") != want {
		t.Errorf("steps = %q, want %q", strings.Join(got, " "), want)
	}
	for _, bad := range []string{`{"cols":0,"rows":1}`, `{"cols":2,"rows":1,"chunks":[9]}`, `{"cols":2,"rows":1,"resizes":[{"at":99,"cols":1,"rows":1}]}`} {
		p := filepath.Join(t.TempDir(), "bad.json")
		writeFile(t, p, bad)
		writeFile(t, strings.TrimSuffix(p, ".json")+".bin", "abc")
		if _, err := readCase(p); err == nil {
			t.Errorf("readCase accepted %s", bad)
		}
	}
}

// Helpers that spell out expected dumps.

func dump(cols, rows int, c screen.DumpCursor, scrollback []screen.DumpLine, lines ...screen.DumpLine) screen.Dump {
	return screen.Dump{Cols: cols, Rows: rows, Cursor: c,
		Modes:      screen.DumpModes{Wraparound: true, MouseTracking: "none"},
		Scrollback: scrollback, Screen: lines}
}

func cur(x, y int) screen.DumpCursor { return screen.DumpCursor{X: x, Y: y, Visible: true} }

func txt(s string) screen.DumpLine {
	var l screen.DumpLine
	for _, r := range s {
		l.Cells = append(l.Cells, screen.DumpCell{Ch: string(r), W: 1})
	}
	return l
}

func wrapped(l screen.DumpLine) screen.DumpLine { l.Wrapped = true; return l }

func line(cells ...screen.DumpCell) screen.DumpLine { return screen.DumpLine{Cells: cells} }

func cell(ch string, w int, fg, bg, f string) screen.DumpCell {
	return screen.DumpCell{Ch: ch, W: w, Fg: fg, Bg: bg, F: f}
}
