package testclock

import (
	"testing"
	"time"
)

func TestClockMovesOnlyWhenAdvanced(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	c := New(start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now = %v, want %v", got, start)
	}
	time.Sleep(time.Millisecond)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now moved by itself to %v", got)
	}
	c.Advance(2 * time.Second)
	if got, want := c.Now(), start.Add(2*time.Second); !got.Equal(want) {
		t.Fatalf("Now = %v after Advance, want %v", got, want)
	}
}
