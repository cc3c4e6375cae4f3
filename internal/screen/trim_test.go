package screen

import (
	"fmt"
	"strings"
	"testing"
)

// A trimmed screen shows what the original shows, keeps the newest lines
// of history, and goes on as the original does once both are full.
func TestTrimScrollback(t *testing.T) {
	var in strings.Builder
	for i := range 300 {
		fmt.Fprintf(&in, "line %d\r\n", i)
	}
	// A saved cursor on the screen, and a wrapped line across the cut.
	in.WriteString("\x1b[3;2H\x1b7\x1b[24;1Hlong line that wraps around the edge of the screen")
	full := New(20, 24, Options{ScrollbackLines: 50})
	full.Write([]byte(in.String()))
	trimmed := cloneScreen(t, full)
	trimmed.TrimScrollback(20)

	if got := trimmed.sb.len(); got != 20 {
		t.Fatalf("trimmed to %d lines, want 20", got)
	}
	if want, got := full.Text(20), trimmed.Text(20); want != got {
		t.Fatalf("trimmed screen and history differ:\nwant %q\ngot  %q", want, got)
	}
	// More output scrolls both; restoring the saved cursor lands on the
	// same row; the trimmed one keeps 20 lines, the newest.
	more := "\r\na\r\nb\r\nc\x1b8X\x1b[24;1H\r\n"
	full.Write([]byte(more))
	trimmed.Write([]byte(more))
	want, got := full.Dump(20), trimmed.Dump(20)
	if d := Diff(&want, &got, 10); d != nil {
		t.Fatalf("after more output:\n  %s", strings.Join(d, "\n  "))
	}
	if got := trimmed.sb.len(); got != 20 {
		t.Fatalf("after more output the trimmed history has %d lines, want 20", got)
	}
	// Through a checkpoint, the limit stays.
	again := cloneScreen(t, trimmed)
	again.Write([]byte(strings.Repeat("x\r\n", 40)))
	if got := again.sb.len(); got != 20 {
		t.Fatalf("a checkpoint of the trimmed screen grew to %d lines, want 20", got)
	}
}

// Trimming to more lines than the history holds changes nothing.
func TestTrimScrollbackShort(t *testing.T) {
	s := New(10, 3, Options{})
	s.Write([]byte("1\r\n2\r\n3\r\n4\r\n5"))
	before := s.Snapshot(-1)
	s.TrimScrollback(1000)
	if after := s.Snapshot(-1); string(after) != string(before) {
		t.Fatalf("snapshot changed: %q -> %q", before, after)
	}
	if s.sb.maxLines != defaultScrollbackLines {
		t.Fatalf("limit %d, want the default", s.sb.maxLines)
	}
	s.TrimScrollback(0)
	if n := s.sb.len(); n != 0 {
		t.Fatalf("TrimScrollback(0) left %d lines", n)
	}
}

// MarshalTrimmed gives the bytes of MarshalBinary after TrimScrollback,
// and leaves the screen as it was.
func TestMarshalTrimmed(t *testing.T) {
	var in strings.Builder
	for i := range 300 {
		fmt.Fprintf(&in, "line %d \x1b[1;3%dmin color\x1b[m\r\n", i, i%8)
	}
	// A saved cursor in each buffer, and the alternate buffer shown.
	in.WriteString("\x1b[3;2H\x1b7\x1b[?1049h\x1b[5;5H\x1b7alt")
	s := New(30, 24, Options{ScrollbackLines: 200})
	s.Write([]byte(in.String()))
	before, _ := s.MarshalBinary()
	for _, n := range []int{0, 1, 20, 199, 200, 500} {
		got, err := s.MarshalTrimmed(n)
		if err != nil {
			t.Fatal(err)
		}
		c := cloneScreen(t, s)
		c.TrimScrollback(n)
		want, _ := c.MarshalBinary()
		if string(got) != string(want) {
			t.Fatalf("MarshalTrimmed(%d) differs from TrimScrollback then MarshalBinary", n)
		}
	}
	if after, _ := s.MarshalBinary(); string(after) != string(before) {
		t.Fatal("MarshalTrimmed changed the screen")
	}
}

// marshal makes room for a checkpoint once: its estimate is at least what
// it writes, for plain and colored history, wide and narrow screens, whole
// and trimmed; and AppendBinary appends what MarshalBinary returns.
func TestMarshalSize(t *testing.T) {
	var colored strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&colored, "\x1b[3%dm%d\x1b[m \x1b[38;5;%dm%s\x1b[m wide \u4e16\u754c\r\n", i%8, i, i%256, strings.Repeat("x", i%150))
	}
	for _, in := range []string{string(plainText(1 << 20)), colored.String()} {
		for _, cols := range []int{20, 80, 200} {
			s := New(cols, 30, Options{})
			s.Write([]byte(in))
			for _, drop := range []int{0, 1, s.sb.len() / 2, s.sb.len()} {
				size := s.marshalSize(drop)
				if n := len(s.marshal(nil, drop)); n > size {
					t.Errorf("%d columns, %d of %d history lines left out: %d bytes, estimated %d", cols, drop, s.sb.len(), n, size)
				}
			}
			whole, _ := s.MarshalBinary()
			if got, _ := s.AppendBinary([]byte("prefix")); string(got) != "prefix"+string(whole) {
				t.Errorf("%d columns: AppendBinary is not the prefix and MarshalBinary", cols)
			}
		}
	}
}
