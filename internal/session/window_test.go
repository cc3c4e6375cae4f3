package session

import (
	"bytes"
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
	if h.recentN > recentCap || h.recentN < recentCap-4000 {
		t.Fatalf("window holds %d bytes before shrinking", h.recentN)
	}
	h.shrinkWindow(idleWindow)
	if h.recentN < idleWindow || h.recentN >= idleWindow+4000 {
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
