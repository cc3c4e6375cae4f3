package session

import (
	"testing"
	"time"
)

func TestActivity(t *testing.T) {
	before := time.Now()
	h := New(Config{ID: "t", Dir: t.TempDir()})
	a := h.Activity()
	if a.Alone.Before(before) || a.Last.Before(before) {
		t.Fatalf("a new host's activity = %+v, want both from its creation (after %v)", a, before)
	}

	v1, v2 := &viewer{h: h}, &viewer{h: h}
	h.addViewer(v1)
	h.addViewer(v2)
	if a := h.Activity(); !a.Alone.IsZero() {
		t.Fatalf("alone since %v with two viewers", a.Alone)
	}
	h.removeViewer(v1)
	if a := h.Activity(); !a.Alone.IsZero() {
		t.Fatalf("alone since %v with one viewer left", a.Alone)
	}
	left := time.Now()
	h.removeViewer(v2)
	if a := h.Activity(); a.Alone.Before(left) {
		t.Fatalf("alone since %v, want from when the last viewer left (after %v)", a.Alone, left)
	}

	// Input counts even when it cannot be delivered (the holder is not
	// connected here).
	typed := time.Now()
	h.Input([]byte("x"))
	if a := h.Activity(); a.Last.Before(typed) {
		t.Fatalf("last activity %v, want after the input at %v", a.Last, typed)
	}
	out := time.Now()
	h.appendOutput(0, []byte("hello"))
	if a := h.Activity(); a.Last.Before(out) {
		t.Fatalf("last activity %v, want after the output at %v", a.Last, out)
	}
}
