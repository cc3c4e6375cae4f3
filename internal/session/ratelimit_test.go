package session

import (
	"strings"
	"testing"
	"time"

	"termkeep/internal/wire"
)

func TestBucket(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := newBucket(10, 20, t0)
	for i := 0; i < 20; i++ {
		if w := b.take(1, t0); w != 0 {
			t.Fatalf("take %d within the burst waits %v", i, w)
		}
	}
	// The 21st token is owed: a tenth of a second at 10 a second.
	if w := b.take(1, t0); w != 100*time.Millisecond {
		t.Errorf("first token past the burst waits %v, want 100ms", w)
	}
	// Half a second later five tokens came back: the debt is paid and four remain.
	for i := 0; i < 4; i++ {
		if w := b.take(1, t0.Add(500*time.Millisecond)); w != 0 {
			t.Fatalf("take %d after the refill waits %v", i, w)
		}
	}
	if w := b.take(1, t0.Add(500*time.Millisecond)); w <= 0 {
		t.Error("the bucket gave more than it refilled")
	}
	// A long idle refills to the burst, never beyond.
	late := t0.Add(time.Hour)
	for i := 0; i < 20; i++ {
		if w := b.take(1, late); w != 0 {
			t.Fatalf("take %d after an hour waits %v", i, w)
		}
	}
	if w := b.take(1, late); w <= 0 {
		t.Error("an idle bucket filled beyond its burst")
	}
	// A clock that steps back adds nothing and breaks nothing.
	if w := b.take(1, t0); w <= 0 {
		t.Error("a clock stepping back refilled the bucket")
	}
}

func TestInputLimiter(t *testing.T) {
	t0 := time.Unix(1000, 0)

	// A person typing (30 keys a second) and a paste of 8 MiB in 1 MiB
	// frames are never slowed.
	l := newInputLimiter(t0)
	now := t0
	for i := 0; i < 3000; i++ {
		now = now.Add(time.Second / 30)
		if w, msg := l.admit(1, now); w != 0 || msg != "" {
			t.Fatalf("keystroke %d slowed by %v: %q", i, w, msg)
		}
	}
	for i := 0; i < 8; i++ {
		if w, _ := l.admit(1<<20, now); w != 0 {
			t.Fatalf("paste frame %d slowed by %v", i, w)
		}
	}

	// 10,000 tiny frames at once: the burst passes, the rest wait in
	// proportion, and the viewer is told once, not per frame.
	l = newInputLimiter(t0)
	var notices int
	var last time.Duration
	for i := 0; i < 10000; i++ {
		w, msg := l.admit(1, t0)
		if msg != "" {
			notices++
			if !strings.Contains(msg, "slowed down") {
				t.Errorf("notice %q", msg)
			}
		}
		if i < InputFrameBurst && w != 0 {
			t.Fatalf("frame %d within the burst waits %v", i, w)
		}
		if i >= InputFrameBurst && w <= last {
			t.Fatalf("frame %d waits %v, no longer than the one before (%v)", i, w, last)
		}
		last = w
	}
	if notices != 1 {
		t.Errorf("%d notices for one storm, want 1", notices)
	}
	if want := time.Duration(10000-InputFrameBurst) * time.Second / InputFrameRate; last != want {
		t.Errorf("the last frame of the storm waits %v, want %v", last, want)
	}
	// Still too fast after the notice interval: told again.
	if _, msg := l.admit(1, t0.Add(tooFastNotice)); msg == "" {
		t.Error("no second notice after the interval while still too fast")
	}
}

// A read-only viewer is told of a refused frame at once, then at most once
// a second for each kind.
func TestRefusals(t *testing.T) {
	var r refusals
	t0 := time.Now()
	for _, c := range []struct {
		typ  wire.Type
		at   time.Duration
		want bool
	}{
		{wire.TypeInput, 0, true},
		{wire.TypeResize, 0, true},
		{wire.TypeInput, 10 * time.Millisecond, false},
		{wire.TypeSignal, 20 * time.Millisecond, true},
		{wire.TypeInput, 999 * time.Millisecond, false},
		{wire.TypeInput, time.Second, true},
		{wire.TypeResize, 5 * time.Second, true},
		{wire.TypeInput, 500 * time.Millisecond, false}, // the clock stepped back
	} {
		if got := r.notify(c.typ, t0.Add(c.at)); got != c.want {
			t.Errorf("%s at %v: told %v, want %v", c.typ, c.at, got, c.want)
		}
	}
}
