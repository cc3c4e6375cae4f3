package screen_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"termkeep/internal/screen"
)

// corpusDir holds the recorded streams: <name>.bin is what a pty master
// produced, <name>.json how (see testdata/record/main.go, which made them).
// Tests run with the package directory as the working directory.
const corpusDir = "testdata/corpus"

// corpusCase is one recorded stream.
type corpusCase struct {
	Name    string         `json:"-"`
	Path    string         `json:"-"` // of the .json, absolute: the xterm.js dumper reads it
	Cols    int            `json:"cols"`
	Rows    int            `json:"rows"`
	Resizes []corpusResize `json:"resizes,omitempty"`
	// Chunks are the sizes of the pty reads, so that the model is fed
	// escape sequences and UTF-8 split where a real pty split them.
	Chunks []int  `json:"chunks,omitempty"`
	Source string `json:"source"`
	Data   []byte `json:"-"`
}

// corpusResize changes the terminal's size once the bytes before At have
// been written.
type corpusResize struct {
	At   int `json:"at"`
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

// loadCorpus reads every case, sorted by name.
func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(corpusDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no cases in %s", corpusDir)
	}
	slices.Sort(paths)
	var cases []corpusCase
	for _, p := range paths {
		c, err := readCase(p)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	return cases
}

// readCase reads a case file and its bytes, and checks that its chunks
// and resizes fit them.
func readCase(path string) (corpusCase, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return corpusCase{}, err
	}
	js, err := os.ReadFile(abs)
	if err != nil {
		return corpusCase{}, err
	}
	c := corpusCase{Name: strings.TrimSuffix(filepath.Base(abs), ".json"), Path: abs}
	if err := json.Unmarshal(js, &c); err != nil {
		return corpusCase{}, fmt.Errorf("read case %s: %w", path, err)
	}
	if c.Data, err = os.ReadFile(strings.TrimSuffix(abs, ".json") + ".bin"); err != nil {
		return corpusCase{}, err
	}
	if c.Cols < 1 || c.Rows < 1 {
		return corpusCase{}, fmt.Errorf("case %s: size %dx%d", path, c.Cols, c.Rows)
	}
	sum := 0
	for _, n := range c.Chunks {
		sum += n
	}
	if c.Chunks != nil && sum != len(c.Data) {
		return corpusCase{}, fmt.Errorf("case %s: chunks add up to %d, the bytes are %d", path, sum, len(c.Data))
	}
	prev := 0
	for _, r := range c.Resizes {
		if r.At < prev || r.At > len(c.Data) || r.Cols < 1 || r.Rows < 1 {
			return corpusCase{}, fmt.Errorf("case %s: bad resize %+v", path, r)
		}
		prev = r.At
	}
	return c, nil
}

// writeCaseFile writes a case the xterm.js dumper can read, dir/name.json
// and dir/name.bin, and returns the path of the .json.
func writeCaseFile(dir, name string, c corpusCase) (string, error) {
	if c.Source == "" {
		c.Source = "written by a test"
	}
	js, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".json")
	if err := os.WriteFile(filepath.Join(dir, name+".bin"), c.Data, 0o644); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, js, 0o644)
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// corpusStep is one write or one resize.
type corpusStep struct {
	Data   []byte
	Resize *corpusResize
}

// steps splits a case into writes at its chunk boundaries and at its
// resize offsets, with the resizes between them. web/test/xterm-dump.mjs
// splits the same way, so both emulators see the same writes.
func (c corpusCase) steps() []corpusStep {
	cuts := map[int]bool{len(c.Data): true}
	off := 0
	for _, n := range c.Chunks {
		off += n
		cuts[off] = true
	}
	for _, r := range c.Resizes {
		cuts[r.At] = true
	}
	ends := make([]int, 0, len(cuts))
	for k := range cuts {
		ends = append(ends, k)
	}
	slices.Sort(ends)
	var out []corpusStep
	start, ri := 0, 0
	for _, end := range ends {
		if end > start {
			out = append(out, corpusStep{Data: c.Data[start:end]})
			start = end
		}
		for ; ri < len(c.Resizes) && c.Resizes[ri].At == end; ri++ {
			out = append(out, corpusStep{Resize: &c.Resizes[ri]})
		}
	}
	return out
}

// finalSize is the case's size after its last resize.
func (c corpusCase) finalSize() (cols, rows int) {
	if n := len(c.Resizes); n > 0 {
		return c.Resizes[n-1].Cols, c.Resizes[n-1].Rows
	}
	return c.Cols, c.Rows
}

// runModel feeds a case to a new screen model, step by step. A panic in
// the model is returned as an error with its stack, so that one broken
// case does not end the whole run.
func runModel(c corpusCase) (s *screen.Screen, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the model panicked: %v\n%s", p, debug.Stack())
		}
	}()
	s = screen.New(c.Cols, c.Rows, screen.Options{})
	for _, st := range c.steps() {
		if st.Resize != nil {
			s.Resize(st.Resize.Cols, st.Resize.Rows)
			continue
		}
		n, err := s.Write(st.Data)
		if err != nil || n != len(st.Data) {
			return nil, fmt.Errorf("Write(%d bytes) = %d, %v", len(st.Data), n, err)
		}
	}
	return s, nil
}

// modelDump is runModel then Dump(-1), normalized.
func modelDump(c corpusCase) (d screen.Dump, err error) {
	s, err := runModel(c)
	if err != nil {
		return d, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("Dump panicked: %v\n%s", p, debug.Stack())
		}
	}()
	d = s.Dump(-1)
	d.Normalize()
	return d, nil
}

// dumpDiff is screen.Diff and, when wholeScrollback is set, a check that
// both scrollbacks have the same number of lines (Diff compares only the
// lines both have).
func dumpDiff(want, got *screen.Dump, wholeScrollback bool, max int) []string {
	out := screen.Diff(want, got, max)
	if wholeScrollback && len(want.Scrollback) != len(got.Scrollback) && len(out) < max {
		out = append(out, fmt.Sprintf("scrollback: want %d lines, got %d", len(want.Scrollback), len(got.Scrollback)))
	}
	return out
}
