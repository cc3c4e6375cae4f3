package outlog

import (
	"errors"
	"fmt"
	"testing"
)

// GapOf names what happened to a gap's bytes from the error its chunk
// carries, however that error is wrapped; Line counts them.
func TestGapOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		n    uint64
		want string
	}{
		{&GapError{Start: 8, End: 1242, Reason: "disk full"}, 1234, "[termkeep: 1234 bytes not logged (disk full)]"},
		{&GapError{Start: 8, End: 9}, 1, "[termkeep: 1 byte not logged]"},
		{fmt.Errorf("read: %w", &GapError{Reason: "read-only file system"}), 2, "[termkeep: 2 bytes not logged (read-only file system)]"},
		{ErrCompacted, 10, "[termkeep: 10 bytes no longer retained]"},
		{fmt.Errorf("segment 0.seg: %w", ErrCorrupt), 3, "[termkeep: 3 bytes lost to a damaged log segment]"},
		{errors.New("something else"), 4, "[termkeep: 4 bytes missing from the log]"},
		{nil, 0, "[termkeep: 0 bytes missing from the log]"},
	} {
		c := Chunk{Kind: ChunkGap, Offset: 100, End: 100 + tc.n, Err: tc.err}
		g := GapOf(c)
		if g.Start != 100 || g.End != 100+tc.n {
			t.Errorf("%v: range [%d, %d), want [100, %d)", tc.err, g.Start, g.End, 100+tc.n)
		}
		if got := g.Line(); got != tc.want {
			t.Errorf("%v: line %q, want %q", tc.err, got, tc.want)
		}
	}
	// A terminal fed the gap ends whatever sequence it cut (CAN) and shows
	// the line on a line of its own.
	if got, want := string(ScreenBytes("[gap]")), "\x18\r\n[gap]\r\n"; got != want {
		t.Errorf("ScreenBytes: %q, want %q", got, want)
	}
}
