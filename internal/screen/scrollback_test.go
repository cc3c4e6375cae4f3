package screen

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// packedLine is a stand-in for an encoded line: a header byte (wrapped when
// i is odd) and text.
func packedLine(i int) []byte {
	return fmt.Appendf([]byte{byte(i & 1)}, "[%d] CC src/pkg%d/file_%x.c -O2 -Wall -o build/obj/%x.o", i, i%113, i, i)
}

func checkLines(t *testing.T, sb *scrollback, first, n int) {
	t.Helper()
	if sb.len() != n {
		t.Fatalf("%d lines, want %d", sb.len(), n)
	}
	for i := range n {
		if got, want := sb.line(i), packedLine(first+i); !bytes.Equal(got, want) {
			t.Fatalf("line %d = %q, want %q", i, got, want)
		}
	}
}

// TestScrollbackCompressed: sealed chunks are compressed once more than
// rawBudget of them wait, or when compacted; every line reads back whole in
// any order, before and after; and truncating into a sealed chunk opens it
// again for appending.
func TestScrollbackCompressed(t *testing.T) {
	sb := &scrollback{maxLines: 100000, maxBytes: 16 << 20}
	raw := 0
	for i := range 60000 {
		sb.push(packedLine(i))
		raw += len(packedLine(i))
	}
	if raw < 3*rawBudget {
		t.Fatalf("%d bytes of lines: the test needs more than the raw budget", raw)
	}
	checkLines(t, sb, 0, 60000)
	sb.release()
	if m := sb.memory(); m > raw/2+rawBudget+2*maxChunkSize+60000*sbRefSize*2 {
		t.Errorf("%d lines of %d bytes held in %d bytes: more than the raw budget waits", sb.len(), raw, m)
	}

	sb = &scrollback{maxLines: 5000, maxBytes: 4 << 20}
	raw = 0
	for i := range 8000 {
		sb.push(packedLine(i))
		if i >= 3000 {
			raw += len(packedLine(i))
		}
	}
	checkLines(t, sb, 3000, 5000)
	if sb.packed != 0 {
		t.Errorf("%d chunks compressed within the raw budget", sb.packed)
	}
	sb.compact()
	checkLines(t, sb, 3000, 5000)
	sb.release()
	if m := sb.memory(); m > raw/2+5000*sbRefSize*2 {
		t.Errorf("%d lines of %d bytes held in %d bytes: not compressed", sb.len(), raw, m)
	}
	// Backwards: a chunk decompressed per switch, the right one each time.
	for i := sb.len() - 1; i >= 0; i -= 97 {
		if got, want := sb.line(i), packedLine(3000+i); !bytes.Equal(got, want) {
			t.Fatalf("line %d = %q, want %q", i, got, want)
		}
	}

	// Unwrap a line in a sealed chunk, and one in the open chunk.
	for _, i := range []int{1, sb.len() - 1} {
		if sb.line(i)[0]&1 == 0 {
			t.Fatalf("line %d is not wrapped to begin with", i)
		}
		sb.clearWrapped(i)
		sb.release()
		if got := sb.line(i); got[0]&1 != 0 || !bytes.Equal(got[1:], packedLine(3000 + i)[1:]) {
			t.Fatalf("line %d after unwrapping = %q", i, got)
		}
	}
	sb.push(packedLine(8000)) // the neighbours of the unwrapped line are intact
	if got, want := sb.line(2), packedLine(3003); !bytes.Equal(got, want) {
		t.Fatalf("line 2 = %q, want %q", got, want)
	}

	// Truncate into a sealed chunk, then push: the lines run on.
	sb = &scrollback{maxLines: 5000, maxBytes: 4 << 20}
	for i := range 3000 {
		sb.push(packedLine(i))
	}
	if len(sb.chunks) < 4 {
		t.Fatalf("%d chunks: the test needs sealed ones", len(sb.chunks))
	}
	if i := sb.refs[sb.head+1500].chunk - sb.chunkBase; int(i) >= len(sb.chunks)-1 {
		t.Fatal("line 1500 is in the open chunk: the test needs it in a sealed one")
	}
	sb.truncate(1500) // into a raw sealed chunk
	for i := 1500; i < 2800; i++ {
		sb.push(packedLine(i))
	}
	checkLines(t, sb, 0, 2800)
	sb.compact()
	sb.line(10) // a cached chunk that truncate must forget
	sb.truncate(1000)
	for i := 1000; i < 2000; i++ {
		sb.push(packedLine(i))
	}
	checkLines(t, sb, 0, 2000)
}

// TestScrollbackCompressedScreen: a screen's history survives compression
// through a dump, a checkpoint and a resize that pulls lines back.
func TestScrollbackCompressedScreen(t *testing.T) {
	s := New(100, 10, Options{})
	for i := range 3000 {
		if i == 1000 {
			s.CompactScrollback() // compressed chunks, then raw ones
		}
		fmt.Fprintf(s, "line %d of the history %x\r\n", i, i*7919)
	}
	if s.sb.packed == 0 || s.sb.packed >= len(s.sb.chunks)-1 {
		t.Fatalf("%d of %d chunks compressed: the test needs both kinds", s.sb.packed, len(s.sb.chunks))
	}
	check := func(s *Screen, what string) {
		t.Helper()
		d := s.Dump(-1)
		for i, l := range d.Scrollback {
			if want := fmt.Sprintf("line %d of the history %x", i, i*7919); l.Text() != want {
				t.Fatalf("%s: history line %d = %q, want %q", what, i, l.Text(), want)
			}
		}
		if len(d.Scrollback) < 2990 {
			t.Fatalf("%s: %d lines of history", what, len(d.Scrollback))
		}
	}
	check(s, "dump")
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	s2 := New(1, 1, Options{})
	if err := s2.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	check(s2, "checkpoint")
	s.Resize(100, 30) // taller: history lines come back onto the screen
	s.Resize(100, 10)
	check(s, "resize")
}

// The history counts the lines its limits dropped from its top, by number
// and by bytes, and not those the program erased.
func TestScrollbackDropped(t *testing.T) {
	s := New(80, 24, Options{ScrollbackLines: 10})
	for i := range 100 {
		fmt.Fprintf(s, "line %d\r\n", i)
	}
	// 100 lines and the cursor's blank row: 23 of them on the screen, 10
	// above it.
	if got := s.ScrollbackDropped(); got != 67 || s.ScrollbackLines() != 10 {
		t.Fatalf("dropped %d with %d lines kept, want 67 and 10", got, s.ScrollbackLines())
	}
	if top := strings.SplitN(s.Text(-1), "\n", 2)[0]; top != "line 67" {
		t.Fatalf("the oldest line kept is %q, want line 67", top)
	}
	s.Write([]byte("\x1b[3J")) // the program erases its history
	if got := s.ScrollbackDropped(); got != 67 || s.ScrollbackLines() != 0 {
		t.Fatalf("after ED 3: dropped %d, %d lines kept", got, s.ScrollbackLines())
	}
	b := New(80, 24, Options{ScrollbackBytes: 4 << 10})
	for i := range 1000 {
		fmt.Fprintf(b, "line %d\r\n", i)
	}
	if got := b.ScrollbackDropped(); got == 0 || got+b.ScrollbackLines()+23 != 1000 {
		t.Fatalf("by bytes: dropped %d, kept %d; want them and the screen's 23 to make 1000", got, b.ScrollbackLines())
	}
}
