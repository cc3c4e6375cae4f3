package screen

import (
	"fmt"
	"strings"
	"testing"
)

// SnapshotKeep erases the terminal's screen without an erase that some
// terminals scroll into their history first (ED 2 in VTE, and in tmux with
// scroll-on-clear, on by default; ED 0 with the cursor at home in tmux):
// the screen being replaced would land in the history above the lines the
// snapshot adds, a second time. Each size is drawn on a terminal that shows
// something else, which must end up showing the session's screen.
func TestSnapshotKeepErasesWithoutScrolling(t *testing.T) {
	for _, rows := range []int{1, 2, 3, 10} {
		t.Run(fmt.Sprint(rows), func(t *testing.T) {
			const cols = 20
			session := New(cols, rows, Options{})
			for i := 1; i <= 30; i++ {
				fmt.Fprintf(session, "line-%d\r\n", i)
			}
			session.Write([]byte("last"))
			keep := string(session.SnapshotKeep(5))
			for _, bad := range []string{"\x1b[2J", "\x1b[H\x1b[J", "\x1b[H\x1b[0J", "\x1b[1;1H\x1b[J"} {
				if strings.Contains(keep, bad) {
					t.Errorf("SnapshotKeep erases with %q: %q", bad, keep)
				}
			}
			term := New(cols, rows, Options{})
			term.Write([]byte(strings.Repeat("\x1b[41mXXXXXXXXXXXXXXXXXXXX", rows) + "\x1b[m\x1b[H"))
			term.Write([]byte(keep))
			if got, want := term.Text(0), session.Text(0); got != want {
				t.Errorf("the terminal shows\n%q\nwant\n%q", got, want)
			}
			if more := term.Snapshot(0); string(more) != string(session.Snapshot(0)) {
				t.Errorf("the terminal's state differs from the session's:\n%q\n%q", more, session.Snapshot(0))
			}
		})
	}
}
