package main

import (
	"testing"
	"time"

	"termkeep/internal/screen"
)

// The local screen is compared cell by cell with the session's text: a
// character that differs, or one that still carries a prediction's
// underline, is a wrong cell; blanks the session's text trimmed are not.
func TestWrongCells(t *testing.T) {
	for _, c := range []struct {
		name, local, session string
		wrong                int
	}{
		{"the same", "$ echo hi\r\nhi\r\n$ ", "$ echo hi\nhi\n$\n", 0},
		{"a character left", "$ echo hi\r\nhi\r\n$ x", "$ echo hi\nhi\n$\n", 1},
		{"a character wrong", "$ echo ho", "$ echo hi\n", 1},
		{"a character missing", "$ echo h", "$ echo hi\n", 1},
		{"an underline left", "$ echo \x1b[4mhi\x1b[m", "$ echo hi\n", 2},
		{"another row", "$\r\n\r\nzz", "$\n", 2},
	} {
		lt := &localTerm{scr: screen.New(reproCols, reproRows, screen.Options{})}
		lt.scr.Write([]byte(c.local))
		if n, at := lt.wrongCells(c.session); n != c.wrong || (n > 0) != (at != "") {
			t.Errorf("%s: %d wrong cells (%s), want %d", c.name, n, at, c.wrong)
		}
	}
}

// A key is timed from its expectation to the first chunk that shows its
// character at its cell; one typed over a cell that shows it already is
// not timed, and a prediction drawn underlined counts as drawn predicted.
func TestLocalTermTimesKeys(t *testing.T) {
	lt := &localTerm{scr: screen.New(reproCols, reproRows, screen.Options{})}
	lt.scr.Write([]byte("$ a"))
	lt.expect(0, 2, "a") // shown already
	lt.expect(0, 9, " ") // a blank cell shows a space
	lt.expect(0, 3, "b")
	lt.expect(0, 4, "c")
	if len(lt.pending) != 2 {
		t.Fatalf("%d keys pending, want 2", len(lt.pending))
	}
	at := lt.pending[0].typed.Add(5 * time.Millisecond)
	lt.feed(stampedChunk{[]byte("\x1b7\x1b[4mb\x1b[m\x1b8"), at}) // b predicted
	lt.feed(stampedChunk{[]byte("x"), at.Add(time.Second)})       // another character at b's cell
	if len(lt.lat) != 1 || lt.lat[0] != 5*time.Millisecond || lt.drawn != 1 {
		t.Errorf("timed %v, %d drawn predicted; want [5ms], 1", lt.lat, lt.drawn)
	}
	if len(lt.pending) != 1 || lt.pending[0].ch != "c" {
		t.Errorf("pending %+v, want c alone", lt.pending)
	}
}
