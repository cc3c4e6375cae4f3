package session

import (
	"testing"
	"time"

	"termkeep/internal/wire"
)

func TestQuiet(t *testing.T) {
	h := New(Config{ID: "q", Dir: t.TempDir()})
	t0 := h.Quiet(time.Now(), time.Second).LastOutput
	if q := h.Quiet(t0.Add(999*time.Millisecond), time.Second); !q.Since.IsZero() {
		t.Fatalf("quiet after 999ms of a 1s threshold: %+v", q)
	}
	if q := h.Quiet(t0.Add(time.Second), time.Second); !q.Since.Equal(t0) {
		t.Fatalf("not quiet since %v after 1s: %+v", t0, q)
	}
	if q := h.Quiet(t0.Add(time.Hour), 0); !q.Since.IsZero() {
		t.Fatalf("quiet with the rule off: %+v", q)
	}
	h.appendOutput(0, []byte("hello"))
	t1 := h.Quiet(time.Now(), time.Second).LastOutput
	if !t1.After(t0) {
		t.Fatalf("output did not move the last output time: %v then %v", t0, t1)
	}
	if q := h.Quiet(t1.Add(500*time.Millisecond), time.Second); !q.Since.IsZero() {
		t.Fatalf("quiet right after output: %+v", q)
	}
	h.MarkEnded(wire.Exit{State: "exited"})
	if q := h.Quiet(t1.Add(time.Hour), time.Second); !q.Since.IsZero() {
		t.Fatalf("an ended session is quiet: %+v", q)
	}
}

func TestLooksLikePrompt(t *testing.T) {
	for line, want := range map[string]bool{
		"user@host:~/src$":             true,
		"user@host:~/src$ ":            true,
		"root@box:/# ":                 true,
		"> ":                           true,
		">>> ":                         true,
		"❯":                            true,
		"continue? ":                   true,
		"Password:":                    true,
		"Overwrite file.txt? [Y/n] ":   true,
		"Proceed (y/n) then press ok.": true,
		"":                             false,
		"   ":                          false,
		"Compiling termkeep v0.1":      false,
		"100%":                         true, // a % at the end reads as a zsh prompt: a guess, not a proof
		"building...":                  false,
	} {
		if got := LooksLikePrompt(line); got != want {
			t.Errorf("LooksLikePrompt(%q) = %v, want %v", line, got, want)
		}
	}
}
