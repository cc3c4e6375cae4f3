package window

import (
	"bytes"
	"fmt"
	"testing"
)

const testCap = 1 << 20

// readAll reads the window from off to its end in pieces of at most max
// bytes, failing on a piece that does not continue where the last ended.
func readAll(t *testing.T, w *Window, off uint64, max int) []byte {
	t.Helper()
	var got []byte
	for off < w.End() {
		parts := w.Read(off, max)
		if len(parts) == 0 {
			t.Fatalf("no bytes at %d (window [%d, %d))", off, w.First(), w.End())
		}
		n := 0
		for _, p := range parts {
			got = append(got, p...)
			n += len(p)
		}
		if n > max {
			t.Fatalf("read %d bytes at %d, asked for at most %d", n, off, max)
		}
		off += uint64(n)
	}
	return got
}

// An idle session's window keeps only its newest bytes, and still serves
// them exactly.
func TestShrink(t *testing.T) {
	w := New(testCap)
	var all []byte
	for i := range 300 {
		chunk := bytes.Repeat([]byte{byte('a' + i%26)}, 4000)
		w.Append(uint64(len(all)), chunk)
		all = append(all, chunk...)
	}
	if w.Len() > testCap || w.Len() < testCap-Block {
		t.Fatalf("window holds %d bytes before shrinking", w.Len())
	}
	const keep = 64 << 10
	before := w.Len()
	if freed := w.Shrink(keep); freed != before-w.Len() || freed == 0 {
		t.Fatalf("shrink freed %d bytes: %d before, %d after", freed, before, w.Len())
	}
	if w.Len() < keep || w.Len() >= keep+Block {
		t.Fatalf("window holds %d bytes after shrinking to %d", w.Len(), keep)
	}
	start := uint64(len(all)) - uint64(w.Len())
	if w.First() != start || w.End() != uint64(len(all)) {
		t.Fatalf("window [%d, %d), want [%d, %d)", w.First(), w.End(), start, len(all))
	}
	if parts := w.Read(start-1, 1<<20); parts != nil {
		t.Fatal("the window still serves a byte it dropped")
	}
	if got := readAll(t, w, start, 10000); !bytes.Equal(got, all[start:]) {
		t.Fatal("the shrunk window's bytes differ")
	}
	// Output appended after a shrink continues the same run.
	more := []byte("after the shrink")
	w.Append(uint64(len(all)), more)
	all = append(all, more...)
	if got := readAll(t, w, start, 7000); !bytes.Equal(got, all[start:]) {
		t.Fatal("the window's bytes differ after appending to a shrunk window")
	}
	// Shrinking never drops the newest chunk, however little is to be kept.
	w.Shrink(0)
	if w.Len() == 0 || w.End() != uint64(len(all)) {
		t.Fatalf("shrink to 0 left %d bytes, end %d", w.Len(), w.End())
	}
}

// Output a line at a time is gathered into blocks: the window holds its
// bytes in a few dozen chunks, not one per line, serves them exactly, and
// never hands out room a later line is written into.
func TestGathersSmallChunks(t *testing.T) {
	w := New(testCap)
	var all []byte
	var early [][]byte // slices handed out before more output came
	for i := range 30000 {
		line := []byte(fmt.Sprintf("line %05d of the output, as a shell prints it\r\n", i))
		if _, kept := w.Append(uint64(len(all)), line); kept {
			t.Fatal("the window kept a small chunk's buffer instead of copying it")
		}
		all = append(all, line...)
		if i%1000 == 0 {
			early = append(early, w.Read(uint64(len(all))-uint64(len(line)), 1<<20)...)
		}
	}
	if w.Len() > testCap || w.Len() < testCap-Block {
		t.Fatalf("window holds %d bytes, want about %d", w.Len(), testCap)
	}
	if n := w.Chunks(); n > 2*testCap/Block {
		t.Fatalf("window holds %d chunks for %d bytes", n, w.Len())
	}
	for _, p := range early {
		if cap(p) != len(p) {
			t.Fatalf("a slice handed out has room beyond its bytes (len %d, cap %d)", len(p), cap(p))
		}
	}
	start := uint64(len(all)) - uint64(w.Len())
	if got := readAll(t, w, start, 7000); !bytes.Equal(got, all[start:]) {
		t.Fatal("the window's bytes differ from the output")
	}
	// A large chunk in a buffer of its own is kept as it is.
	big := bytes.Repeat([]byte("x"), 64<<10)
	if _, kept := w.Append(uint64(len(all)), big); !kept {
		t.Fatal("the window copied a large chunk it could keep")
	}
	// A short chunk at the start of a large buffer is copied: kept, it
	// would pin the whole buffer.
	buf := make([]byte, 8<<10, 64<<10)
	if _, kept := w.Append(w.End(), buf); kept {
		t.Fatal("the window kept a short chunk of a large buffer")
	}
}

// What Append and Read do at the edges: duplicates after a reconnect,
// overlaps, holes, reads from before the window and from the future.
func TestEdges(t *testing.T) {
	type step struct {
		op        string // "append", "reset", "shrink"
		off       uint64
		data      string
		wantAdded int
	}
	for _, tc := range []struct {
		name       string
		steps      []step
		first, end uint64
		want       string // the window's bytes from first
		readOff    uint64 // and a read there
		wantRead   string // "" for nil
		readMax    int
	}{
		{name: "empty", first: 0, end: 0, readOff: 0, readMax: 10},
		{name: "empty window far along", steps: []step{{op: "reset", off: 1000}}, first: 1000, end: 1000, readOff: 999, readMax: 10},
		{
			name:  "a duplicate after a reconnect is skipped",
			steps: []step{{"append", 0, "hello", 5}, {"append", 0, "hello", 0}, {"append", 2, "llo", 0}},
			first: 0, end: 5, want: "hello", readOff: 1, wantRead: "ello", readMax: 10,
		},
		{
			name:  "an overlap adds only the new bytes",
			steps: []step{{"append", 0, "hello", 5}, {"append", 3, "lo world", 6}},
			first: 0, end: 11, want: "hello world", readOff: 4, wantRead: "o w", readMax: 3,
		},
		{
			name:  "a hole starts the window over",
			steps: []step{{"append", 0, "hello", 5}, {"append", 100, "later", 5}},
			first: 100, end: 105, want: "later", readOff: 3, readMax: 10,
		},
		{
			name:  "a read from the future is nil",
			steps: []step{{"append", 0, "hello", 5}},
			first: 0, end: 5, want: "hello", readOff: 6, readMax: 10,
		},
		{
			name:  "a read at the end is nil",
			steps: []step{{"append", 0, "hello", 5}},
			first: 0, end: 5, want: "hello", readOff: 5, readMax: 10,
		},
		{
			name:  "a read of nothing is nil",
			steps: []step{{"append", 0, "hello", 5}},
			first: 0, end: 5, want: "hello", readOff: 0, readMax: 0,
		},
		{
			name:  "empty output adds nothing",
			steps: []step{{"append", 7, "", 0}},
			first: 0, end: 0, readOff: 0, readMax: 10,
		},
		{
			name:  "reset then append continues at the reset",
			steps: []step{{"append", 0, "hello", 5}, {"reset", 50, "", 0}, {"append", 50, "x", 1}},
			first: 50, end: 51, want: "x", readOff: 49, readMax: 10,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := New(testCap)
			for _, s := range tc.steps {
				switch s.op {
				case "append":
					if added, _ := w.Append(s.off, []byte(s.data)); added != s.wantAdded {
						t.Fatalf("Append(%d, %q) added %d, want %d", s.off, s.data, added, s.wantAdded)
					}
				case "reset":
					w.Reset(s.off)
				}
			}
			if w.First() != tc.first || w.End() != tc.end {
				t.Fatalf("window [%d, %d), want [%d, %d)", w.First(), w.End(), tc.first, tc.end)
			}
			if got := string(readAll(t, w, w.First(), 3)); got != tc.want {
				t.Fatalf("window holds %q, want %q", got, tc.want)
			}
			var got []byte
			parts := w.Read(tc.readOff, tc.readMax)
			for _, p := range parts {
				got = append(got, p...)
			}
			if string(got) != tc.wantRead || (tc.wantRead == "") != (parts == nil) {
				t.Fatalf("Read(%d, %d) = %q (nil %v), want %q", tc.readOff, tc.readMax, got, parts == nil, tc.wantRead)
			}
		})
	}
}

// The window never holds much more than its capacity, however the output
// comes; a chunk larger than the capacity is held alone.
func TestCapacity(t *testing.T) {
	w := New(64 << 10)
	var end uint64
	for i := range 1000 {
		n := 1 + (i*7919)%(40<<10)
		w.Append(end, make([]byte, n))
		end += uint64(n)
		if w.Len() > 64<<10 && w.Chunks() > 1 {
			t.Fatalf("after %d appends the window holds %d bytes in %d chunks", i+1, w.Len(), w.Chunks())
		}
		if w.End() != end || w.First()+uint64(w.Len()) != end {
			t.Fatalf("window [%d, %d) with %d bytes, want end %d", w.First(), w.End(), w.Len(), end)
		}
	}
	w.Append(end, make([]byte, 100<<10))
	if w.Chunks() != 1 || w.Len() != 100<<10 {
		t.Fatalf("a chunk larger than the capacity: %d bytes in %d chunks", w.Len(), w.Chunks())
	}
}
