package holder

import (
	"runtime"
	"testing"
	"time"

	"termkeep/internal/wire"
)

// A server's fg-query is answered with its id and what the kernel says
// of the pty's foreground: here the session's own bash, reading the
// terminal in its read builtin.
func TestFgQuery(t *testing.T) {
	th := startHolder(t, "printf 'ready '; read x", 0)
	th.waitEnd(len64("ready "))
	s, _ := th.connect(-1)
	want := wire.FgReadingTerminal
	if runtime.GOOS != "linux" {
		want = wire.FgUnknown
	}
	var got wire.FgState
	for id := uint64(1); ; id++ {
		if err := s.w.FgQuery(id); err != nil {
			t.Fatal(err)
		}
		f := s.next()
		for f.Type != wire.TypeFgState {
			f = s.next() // term-mode, output
		}
		var err error
		if got, err = wire.ParseFgState(f.Payload); err != nil || got.ID != id {
			t.Fatalf("answer %+v, %v; want the id %d", got, err, id)
		}
		if got.Kind == want || id == 100 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got.Kind != want {
		t.Fatalf("the foreground: %+v, want %s", got, want)
	}
	if want == wire.FgUnknown {
		return
	}
	if !got.Shell || int(got.Pgrp) != th.h.cmd.Process.Pid || got.Comm != "bash" || !got.UnreadKnown || got.Unread != 0 {
		t.Errorf("the foreground: %+v, want bash (%d) itself, nothing unread", got, th.h.cmd.Process.Pid)
	}
}
