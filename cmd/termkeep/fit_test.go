package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFitTable(t *testing.T) {
	rows := func() [][]string {
		return [][]string{
			{"ID", "NAME", "CWD", "COMMAND"},
			{"k1x3f5tv", "work", "/home/user/src/github.com/org/project", "bash --login"},
			{"m9q2w8er", "a-very-long-session-name-indeed", "/tmp", "make -j8 test WHAT=./internal/... GOFLAGS=-race"},
		}
	}
	order := []shrink{{col: 3, min: 10}, {col: 2, min: 10, keepEnd: true}, {col: 1, min: 8}}
	for _, c := range []struct {
		name  string
		width int
		check func(t *testing.T, got [][]string)
	}{
		{"wide enough", 200, func(t *testing.T, got [][]string) {
			if got[2][3] != "make -j8 test WHAT=./internal/... GOFLAGS=-race" {
				t.Fatalf("cut with room to spare: %q", got[2][3])
			}
		}},
		{"80 columns", 80, func(t *testing.T, got [][]string) {
			if !strings.HasPrefix(got[2][3], "make -j8") || !strings.HasSuffix(got[2][3], "…") {
				t.Fatalf("command %q: want its start kept", got[2][3])
			}
		}},
		{"narrow: directory keeps its end", 60, func(t *testing.T, got [][]string) {
			if !strings.HasSuffix(got[1][2], "project") || !strings.HasPrefix(got[1][2], "…") {
				t.Fatalf("directory %q: want its end kept", got[1][2])
			}
		}},
		{"phone: every column at its minimum", 20, func(t *testing.T, got [][]string) {
			if utf8.RuneCountInString(got[2][1]) != 8 || utf8.RuneCountInString(got[2][3]) != 10 {
				t.Fatalf("minimums not kept: %q", got[2])
			}
		}},
		{"no terminal", 0, func(t *testing.T, got [][]string) {
			if got[2][1] != "a-very-long-session-name-indeed" {
				t.Fatalf("cut without a width: %q", got[2][1])
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := fitTable(rows(), c.width, 2, order)
			if c.width >= 40 {
				if l := rowWidth(got, 2); l > c.width {
					t.Fatalf("rows %d wide, want at most %d: %q", l, c.width, got)
				}
			}
			c.check(t, got)
		})
	}
}

// rowWidth is the width of a table's rows once columns are padded.
func rowWidth(rows [][]string, gap int) int {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	total := gap * (len(widths) - 1)
	for _, w := range widths {
		total += w
	}
	return total
}

func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		s       string
		w       int
		keepEnd bool
		want    string
	}{
		{"hello", 10, false, "hello"}, {"hello world", 6, false, "hello…"}, {"/a/b/c/d", 5, true, "…/c/d"},
		{"héllo wörld", 4, false, "hél…"}, {"x", 0, false, "x"[:0]}, {"abc", 1, false, "…"},
	} {
		if got := truncate(c.s, c.w, c.keepEnd); got != c.want {
			t.Errorf("truncate(%q, %d, %v) = %q, want %q", c.s, c.w, c.keepEnd, got, c.want)
		}
	}
}
