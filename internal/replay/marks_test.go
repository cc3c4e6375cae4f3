package replay

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// scanMarks runs the marks scanner over p fed in the given pieces.
func scanMarks(pieces ...[]byte) []Marker {
	var out []Marker
	m := &marks{emit: func(mk Marker) { out = append(out, mk) }}
	off := uint64(0)
	for _, p := range pieces {
		m.write(off, time.Unix(0, int64(off)), p)
		off += uint64(len(p))
	}
	return out
}

// markStream has marks of every kind, ended by BEL and by ST, other OSCs,
// escape sequences and a DCS string among them, and a command with no
// command line (a CAN cancels nothing of it).
const markStream = "\x1b]0;title\x07" + promptA + "\x1b[32m~\x1b[m $ " + promptB + "git status\x1b[K\x08\x08us" +
	"\r\n" + markC + "On branch main\r\n\x1b]133;D;0\x07" + promptA + "$ " + promptB + "\x1b]8;;http://x/\x07link\x1b]8;;\x07" +
	"\x1b(0q\x1b(B!\r\n\x1b]133;C\x1b\\\x1b]133;D;127;aid=3\x1b\\\x1bP+q544e\x1b\\" + promptA + promptB + "\x18\x1b]133;C\x07"

// The scanner finds the same marks wherever the stream is cut.
func TestMarksSplitAnywhere(t *testing.T) {
	whole := scanMarks([]byte(markStream))
	want := "command@57 \"git status\"\ndone@81 status=0\ncommand@144 \"linkq!\"\ndone@153 status=127\ncommand@199\n"
	if got := kinds(whole); got != want {
		t.Fatalf("marks:\n%s\nwant:\n%s", got, want)
	}
	for cut := 1; cut < len(markStream); cut++ {
		got := scanMarks([]byte(markStream[:cut]), []byte(markStream[cut:]))
		if kinds(got) != kinds(whole) {
			t.Fatalf("cut at %d (%q|%q): %s", cut, markStream[:cut], markStream[cut:], kinds(got))
		}
		// A mark has the time of the piece its first byte came in.
		for _, m := range got {
			want := time.Unix(0, 0)
			if m.Offset >= uint64(cut) {
				want = time.Unix(0, int64(cut))
			}
			if !m.Time.Equal(want) {
				t.Fatalf("cut at %d: marker at %d has the time %v, want %v", cut, m.Offset, m.Time, want)
			}
		}
	}
	// Byte by byte.
	var pieces [][]byte
	for i := range len(markStream) {
		pieces = append(pieces, []byte{markStream[i]})
	}
	if got := kinds(scanMarks(pieces...)); got != want {
		t.Fatalf("byte by byte:\n%s", got)
	}
}

// A label is trimmed, valid UTF-8 and at most 200 characters.
func TestMarksLabel(t *testing.T) {
	long := strings.Repeat("é", 300)
	got := scanMarks([]byte(promptB + "  \xff" + long + "  \r\n" + markC))
	if len(got) != 1 {
		t.Fatalf("marks %v", got)
	}
	l := got[0].Label
	if !utf8.ValidString(l) || utf8.RuneCountInString(l) != maxLabel || !strings.HasPrefix(l, "\uFFFDé") {
		t.Fatalf("label %q (%d characters)", l, utf8.RuneCountInString(l))
	}
}
