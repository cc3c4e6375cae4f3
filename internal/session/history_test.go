package session

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/screen"
	"termkeep/internal/testclock"
	"termkeep/internal/wire"
)

// The marks say the count at a marked offset, and nothing at any other:
// not between marks, not before the oldest kept, not after the newest, not
// across a skip.
func TestScrollMarks(t *testing.T) {
	var s scrollMarks
	if _, ok := s.at(0); ok {
		t.Fatal("a mark before any was noted")
	}
	for i := uint64(1); i <= marksKept+10; i++ {
		s.total = i * 3
		s.note(i * markEvery)
	}
	for _, c := range []struct {
		off  uint64
		want uint64
		ok   bool
	}{
		{(marksKept + 10) * markEvery, (marksKept + 10) * 3, true},
		{11 * markEvery, 33, true},
		{10 * markEvery, 0, false}, // dropped
		{11*markEvery + 1, 0, false},
		{(marksKept + 11) * markEvery, 0, false}, // not yet
		{1 << 63, 0, false},
	} {
		if got, ok := s.at(c.off); got != c.want || ok != c.ok {
			t.Errorf("at(%d) = %d, %v; want %d, %v", c.off, got, ok, c.want, c.ok)
		}
	}
	// The model skipped bytes: the run starts again.
	s.total = 1000
	s.note((marksKept + 20) * markEvery)
	if _, ok := s.at((marksKept + 10) * markEvery); ok {
		t.Error("a mark from before a skip was kept")
	}
	if got, ok := s.at((marksKept + 20) * markEvery); !ok || got != 1000 {
		t.Errorf("after a skip: %d, %v", got, ok)
	}
	s.forget()
	if _, ok := s.at((marksKept + 20) * markEvery); ok {
		t.Error("a mark survived forget")
	}
	for _, off := range []uint64{0, 1, markEvery - 1, markEvery, markEvery + 1} {
		if m := nextMark(off); m < off || m%markEvery != 0 || m-off >= markEvery {
			t.Errorf("nextMark(%d) = %d", off, m)
		}
	}
}

// A viewer that stays open through a burst (seq 1 150000) and falls
// behind is resynced without losing its history: what it drew before, the
// lines it missed up to its scrollback limit, then the rest, in order,
// with no line lost or drawn twice at the seams, as a terminal of that
// limit (xterm.js's scrollback) keeps them. A burst that the server's
// screen model keeps whole (10,000 lines) reaches a viewer of a larger
// limit whole.
func TestResyncKeepsHistory(t *testing.T) {
	t.Run("seq 1 150000, limit 5000", func(t *testing.T) { resyncKeepsHistory(t, 5000, 150000, 0) })
	t.Run("9000 long lines, limit 100000", func(t *testing.T) { resyncKeepsHistory(t, 100000, 9000, 70) })
}

func resyncKeepsHistory(t *testing.T, limit, count, pad int) {
	clock := testclock.New(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	vh := newViewerHostOn(t, outlog.Options{}, clock.Now)
	head := fmt.Sprintf("$ seq 1 %d\r\n", count)
	vh.live([]byte(head))
	vh.connected()
	pv := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromSnapshot, Scrollback: limit, Cols: 80, Rows: 24}, ViewerOptions{Queue: 64 << 10})
	w := pv.welcome()
	term := screen.New(int(w.Cols), int(w.Rows), screen.Options{ScrollbackLines: limit})
	var burst strings.Builder
	for i := 1; i <= count; i++ {
		fmt.Fprintf(&burst, "%d %s\r\n", i, strings.Repeat("x", pad))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := []byte(burst.String())
		for len(b) > 0 {
			n := min(len(b), 1500)
			vh.live(b[:n])
			b = b[n:]
		}
		vh.live([]byte("$ "))
	}()
	end := uint64(len(head) + burst.Len() + 2)
	// The burst comes in no time by the host's clock: the page draws
	// none of it before it is all out.
	<-done
	// It acks what it has drawn, as a page does: it is sent at most a
	// queue beyond that.
	ack := wire.NewWriter(pv.c)
	resynced, drawn := false, uint64(0)
	deadline := time.Now().Add(60 * time.Second)
	for drawn < end && time.Now().Before(deadline) {
		f := pv.next()
		switch f.Type {
		case wire.TypeSnapshot:
			off, data, _ := wire.ParseOutput(f.Payload)
			term.Write(data)
			if drawn > 0 {
				resynced = true
			}
			drawn = off
			ack.Uint64(wire.TypeAck, drawn)
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(f.Payload)
			if off != drawn {
				t.Fatalf("output at %d, drawn up to %d", off, drawn)
			}
			term.Write(data)
			drawn += uint64(len(data))
			ack.Uint64(wire.TypeAck, drawn)
			if !resynced {
				// A page drawing a frame in 4 s: what is behind it
				// would take it far longer than flow.CatchUpWithin.
				clock.Advance(4 * time.Second)
			}
		}
	}
	<-done
	if !resynced {
		t.Fatal("the viewer was never resynced: the test shows nothing")
	}
	// The history: a run of consecutive numbers ending at count, as long
	// as the terminal's limit allows, then the prompt.
	lines := strings.Split(strings.TrimRight(term.Text(-1), "\n "), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "$" {
		t.Fatalf("the last line is %q, want the prompt", last)
	}
	nums := lines[:len(lines)-1]
	for i, l := range nums {
		l, _, _ = strings.Cut(strings.TrimSpace(l), " x")
		n, err := strconv.Atoi(l)
		if err != nil {
			if i == 0 && strings.HasPrefix(l, "$ seq") {
				continue
			}
			t.Fatalf("line %d of the history is %q", i, l)
		}
		if want := count - (len(nums) - 1 - i); n != want {
			t.Fatalf("line %d of %d is %d, want %d: a line lost or drawn twice", i, len(nums), n, want)
		}
	}
	if len(nums) < min(limit, count+1) {
		t.Fatalf("%d lines of history, want the terminal's %d", len(nums), limit)
	}
	t.Logf("%d lines of history, resyncs %d", len(nums), vh.h.Resyncs())
}
