package session

import (
	"bytes"
	"fmt"
	"testing"
)

// An idle session's window keeps only its newest bytes, and still serves
// them exactly.
func TestShrinkWindow(t *testing.T) {
	h := New(Config{ID: "t", Dir: t.TempDir()})
	var all []byte
	for i := range 300 {
		chunk := bytes.Repeat([]byte{byte('a' + i%26)}, 4000)
		h.appendOutput(uint64(len(all)), chunk)
		all = append(all, chunk...)
	}
	if h.recentN > recentCap || h.recentN < recentCap-windowBlock {
		t.Fatalf("window holds %d bytes before shrinking", h.recentN)
	}
	h.shrinkWindow(idleWindow)
	if h.recentN < idleWindow || h.recentN >= idleWindow+windowBlock {
		t.Fatalf("window holds %d bytes after shrinking to %d", h.recentN, idleWindow)
	}
	start := uint64(len(all)) - uint64(h.recentN)
	if parts, _, _, _ := h.window(start-1, 1<<20); parts != nil {
		t.Fatal("the window still serves a byte it dropped")
	}
	var got []byte
	for off := start; off < uint64(len(all)); {
		parts, end, _, _ := h.window(off, 10000)
		if end != uint64(len(all)) || len(parts) == 0 {
			t.Fatalf("window at %d: %d parts, end %d", off, len(parts), end)
		}
		for _, p := range parts {
			got = append(got, p...)
			off += uint64(len(p))
		}
	}
	if !bytes.Equal(got, all[start:]) {
		t.Fatal("the shrunk window's bytes differ")
	}
}

// Output a line at a time is gathered into blocks: the window holds its
// bytes in a few dozen chunks, not one per line, serves them exactly, and
// never hands out room a later line is written into.
func TestWindowGathersSmallChunks(t *testing.T) {
	h := New(Config{ID: "t", Dir: t.TempDir()})
	var all []byte
	var early [][]byte // slices handed out before more output came
	for i := range 30000 {
		line := []byte(fmt.Sprintf("line %05d of the output, as a shell prints it\r\n", i))
		if kept := h.appendOutput(uint64(len(all)), line); kept {
			t.Fatal("the window kept a small chunk's buffer instead of copying it")
		}
		all = append(all, line...)
		if i%1000 == 0 {
			parts, _, _, _ := h.window(uint64(len(all))-uint64(len(line)), 1<<20)
			early = append(early, parts...)
		}
	}
	if h.recentN > recentCap || h.recentN < recentCap-windowBlock {
		t.Fatalf("window holds %d bytes, want about %d", h.recentN, recentCap)
	}
	if n := len(h.recent); n > 2*recentCap/windowBlock {
		t.Fatalf("window holds %d chunks for %d bytes", n, h.recentN)
	}
	for _, p := range early {
		if cap(p) != len(p) {
			t.Fatalf("a slice handed out has room beyond its bytes (len %d, cap %d)", len(p), cap(p))
		}
	}
	start := uint64(len(all)) - uint64(h.recentN)
	var got []byte
	for off := start; off < uint64(len(all)); {
		parts, _, _, _ := h.window(off, 7000)
		if len(parts) == 0 {
			t.Fatalf("no bytes at %d", off)
		}
		for _, p := range parts {
			got = append(got, p...)
			off += uint64(len(p))
		}
	}
	if !bytes.Equal(got, all[start:]) {
		t.Fatal("the window's bytes differ from the output")
	}
	// A large chunk in a buffer of its own is kept as it is.
	big := bytes.Repeat([]byte("x"), 64<<10)
	if !h.appendOutput(uint64(len(all)), big) {
		t.Fatal("the window copied a large chunk it could keep")
	}
}
