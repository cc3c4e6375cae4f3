package e2e

import (
	"strings"
	"testing"
)

func TestCountNumbered(t *testing.T) {
	line := func(n int) string { return strings.TrimSuffix(string(AppendNumbered(nil, n)), "\r\n") }
	for _, c := range []struct {
		name string
		rows []string
		want string
	}{
		{"whole", []string{"$ x", line(3), line(4), line(5), "END 6"},
			"lines L000000003..L000000005: 3 shown, 0 missing, 0 repeated, 0 out of order, 0 torn"},
		{"gap and repaint", []string{line(1), line(2), line(5), line(4), line(5), line(9)},
			"lines L000000001..L000000009: 6 shown, 4 missing, 1 repeated, 1 out of order, 0 torn (first gaps 3..3, 6..8)"},
		{"torn", []string{line(1), line(2)[:20], line(3)},
			"lines L000000001..L000000003: 2 shown, 1 missing, 0 repeated, 0 out of order, 1 torn (first gaps 2..2)"},
		{"none", []string{"hello"},
			"lines L-00000001..L-00000001: 0 shown, 0 missing, 0 repeated, 0 out of order, 0 torn"},
	} {
		if got := CountNumbered(c.rows).String(); got != c.want {
			t.Errorf("%s: got %s\nwant %s", c.name, got, c.want)
		}
	}
}
