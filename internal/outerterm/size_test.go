package outerterm

import (
	"strconv"
	"strings"
	"testing"

	"termkeep/internal/screen"
)

// rows returns a screen's rows, trailing blanks trimmed.
func rows(s *screen.Screen) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(s.Text(0), "\n"), "\n") {
		out = append(out, strings.TrimRight(l, " "))
	}
	return out
}

// clip is the top-left cols x n of a screen's rows, marked with Fill
// where the session is smaller.
func clip(rs []string, scols, cols, n int) []string {
	var out []string
	for y := range n {
		l := ""
		if y < len(rs) {
			l = rs[y]
		}
		r := []rune(l)
		r = r[:min(len(r), cols)]
		line := string(r)
		if cols > scols {
			line += strings.Repeat(" ", scols-len(r)) + strings.Repeat(string(Fill), cols-scols)
		}
		if y >= len(rs) {
			line = strings.Repeat(string(Fill), cols)
		}
		out = append(out, strings.TrimRight(line, " "))
	}
	return out
}

// A terminal of another size than the session's shows the session's
// screen clipped, or marked beyond it, through every change of either
// size, and never a character left from before; at the same size the
// bytes pass as they are.
func TestTermAtTheSessionsSize(t *testing.T) {
	full := func(n int) string { // a full-screen program's paint
		var b strings.Builder
		b.WriteString("\x1b[H\x1b[2J")
		for y := range n {
			b.WriteString("\x1b[" + strconv.Itoa(y+1) + ";1H" + strings.Repeat(string(rune('a'+y%26)), 100))
		}
		return b.String()
	}
	term := screen.New(100, 30, screen.Options{}) // the outer terminal
	session := screen.New(100, 30, screen.Options{})
	ot := New(100, 30, false)
	write := func(b []byte) {
		term.Write(b)
		if ot.Redraw { // a snapshot is asked for, as attach reconnects for one
			term.Write(ot.Snapshot(session.Snapshot(0)))
		}
	}
	out := func(p string) {
		session.Write([]byte(p))
		write(ot.Output([]byte(p)))
		write(ot.Paint())
	}
	check := func(what string, scols, cols, n int) {
		t.Helper()
		want := clip(rows(session), scols, cols, n)
		got := rows(term)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: the terminal shows\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	write(ot.Session(100, 30))
	snap := session.Snapshot(0)
	write(ot.Snapshot(snap))
	p := full(30)
	if b := ot.Output([]byte(p)); string(b) != p {
		t.Fatal("at the session's size the bytes were changed")
	}
	session.Write([]byte(p))
	term.Write([]byte(p))
	check("same size", 100, 100, 30)

	// The session shrinks to 60x20 (another viewer took it): its rows
	// are clipped by the program itself, the rest of the terminal marked.
	session.Resize(60, 20)
	write(ot.Session(60, 20))
	out(full(20))
	check("session smaller", 60, 100, 30)

	// The terminal shrinks below the session: clipped.
	term.Resize(40, 10)
	write(ot.Resize(40, 10))
	out("\x1b[5;1Hchanged-row-five-which-is-longer-than-forty-columns")
	check("terminal smaller", 60, 40, 10)

	// Both at 40x10 again: the model's screen is drawn once, then the
	// bytes pass.
	session.Resize(40, 10)
	write(ot.Session(40, 10))
	if ot.Rendered() {
		t.Fatal("still drawn from the model at the same size")
	}
	check("same size again", 40, 40, 10)
	p = "\x1b[10;1Hlast"
	if b := ot.Output([]byte(p)); string(b) != p {
		t.Fatal("the bytes do not pass again")
	}
}
