package server

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"termkeep/internal/store"
)

// When a session's end the registry refused is written again: a refusal
// time lifts (locked, read-only, a full disk) after a wait that doubles
// from an eighth of the longest to the longest and stays there; anything
// else never.
func TestEndRetry(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	full := fmt.Errorf("store: end session a: %w", store.ErrFull)
	p := endRetry{max: 10 * time.Second}
	cases := []struct {
		name     string
		p        endRetry
		err      error
		failures int
		after    time.Duration
		retry    bool
	}{
		{"full disk, first refusal", p, full, 1, 1250 * time.Millisecond, true},
		{"full disk, second", p, full, 2, 2500 * time.Millisecond, true},
		{"full disk, third", p, full, 3, 5 * time.Second, true},
		{"full disk, fourth", p, full, 4, 10 * time.Second, true},
		{"full disk, hundredth", p, full, 100, 10 * time.Second, true},
		{"locked", p, store.ErrLocked, 1, 1250 * time.Millisecond, true},
		{"read-only", p, store.ErrReadOnly, 5, 10 * time.Second, true},
		{"damaged", p, store.ErrDamaged, 1, 0, false},
		{"not found", p, store.ErrNotFound, 1, 0, false},
		{"anything else", p, errors.New("boom"), 1, 0, false},
		{"a test's short interval", endRetry{max: 400 * time.Millisecond}, full, 1, 50 * time.Millisecond, true},
		{"a test's short interval, later", endRetry{max: 400 * time.Millisecond}, full, 9, 400 * time.Millisecond, true},
		{"a tiny interval", endRetry{max: time.Millisecond}, full, 1, time.Millisecond, true},
	}
	for _, c := range cases {
		at, retry := c.p.next(c.err, c.failures, now)
		if retry != c.retry || retry && at.Sub(now) != c.after {
			t.Errorf("%s: next = %v after, retry %v; want %v, %v", c.name, at.Sub(now), retry, c.after, c.retry)
		}
	}
}
