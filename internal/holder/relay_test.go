package holder

import (
	"bytes"
	"testing"
	"time"

	"termkeep/internal/outlog"
)

// TestRelayPace: the pty's reader waits while the server is more than the
// lag bound behind and taking output; it goes on once the server catches
// up, once the server has taken nothing for relayStall, once there is no
// server, and once the child is gone.
func TestRelayPace(t *testing.T) {
	l, err := outlog.Open(t.TempDir(), outlog.Options{Retention: 256 << 10, Sync: outlog.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := newRelay(l)
	if r.maxLag != 256<<10 {
		t.Fatalf("maxLag %d, want the retention (256 KiB) when it is below %d", r.maxLag, relayLagMax)
	}
	waited := func() <-chan time.Duration {
		ch := make(chan time.Duration, 1)
		go func() {
			start := time.Now()
			r.wait()
			ch <- time.Since(start)
		}()
		return ch
	}
	chunk := bytes.Repeat([]byte("y\n"), 32<<10)
	for l.End() <= r.maxLag {
		l.Append(chunk)
	}

	// No server: nobody to wait for.
	if d := <-waited(); d > time.Second {
		t.Fatalf("waited %v with no server", d)
	}

	// A server far behind that keeps taking output holds the reader until
	// it is within the bound.
	r.sent(0, time.Now())
	done := waited()
	for off := uint64(0); off+r.maxLag < l.End(); off += 16 << 10 {
		select {
		case d := <-done:
			t.Fatalf("the reader went on after %v with the server %d behind", d, l.End()-off)
		case <-time.After(50 * time.Millisecond):
		}
		r.sent(off, time.Now())
	}
	r.sent(l.End(), time.Now())
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the reader still waits with the server caught up")
	}

	// A server that stops taking output is waited for relayStall at most.
	r.sent(0, time.Now())
	if d := <-waited(); d < relayStall/2 || d > relayStall+5*time.Second {
		t.Fatalf("waited %v for a stalled server, want about %v", d, relayStall)
	}

	// Once the child is gone its last bytes are read at once.
	r.sent(0, time.Now())
	done = waited()
	time.Sleep(50 * time.Millisecond)
	r.childGone()
	select {
	case <-done:
	case <-time.After(relayStall / 2):
		t.Fatal("the reader still waits after the child exited")
	}
	l.Release()
}

// relayPause, case by case, hostile ones included: the reader never
// waits without a server, after the child, for a server within the bound
// or one that claims more than the log holds, nor longer than relayStall
// whatever the clock says.
func TestRelayPause(t *testing.T) {
	const lag = 1 << 20
	behind := relayState{server: true, held: 0, end: lag + 1, maxLag: lag}
	with := func(f func(*relayState)) relayState { s := behind; f(&s); return s }
	for _, tc := range []struct {
		name string
		s    relayState
		want time.Duration
	}{
		{"no server", with(func(s *relayState) { s.server = false }), 0},
		{"child gone", with(func(s *relayState) { s.childGone = true }), 0},
		{"at the bound", with(func(s *relayState) { s.end = lag }), 0},
		{"one byte past the bound, just sent", behind, relayStall},
		{"past the bound, sent a while ago", with(func(s *relayState) { s.idle = 100 * time.Millisecond }), relayStall - 100*time.Millisecond},
		{"stalled exactly relayStall", with(func(s *relayState) { s.idle = relayStall }), 0},
		{"stalled long", with(func(s *relayState) { s.idle = time.Hour }), 0},
		{"claims more than the log holds", with(func(s *relayState) { s.held = s.end + 1<<30 }), 0},
		{"held at the very end", with(func(s *relayState) { s.held, s.end = ^uint64(0), ^uint64(0) }), 0},
		{"sent after now was read", with(func(s *relayState) { s.idle = -time.Millisecond }), relayStall},
		{"clock far behind the last send", with(func(s *relayState) { s.idle = -time.Hour }), relayStall},
		{"no bound at all", with(func(s *relayState) { s.maxLag = 0; s.end = 1 }), relayStall},
	} {
		if got := relayPause(tc.s); got != tc.want {
			t.Errorf("%s: pause %v, want %v (%+v)", tc.name, got, tc.want, tc.s)
		}
	}
}

// A server that falls behind, stalls, then bursts, on a clock the test
// moves: the reader's pause at each moment.
func TestRelayPauseTrace(t *testing.T) {
	l, err := outlog.Open(t.TempDir(), outlog.Options{Retention: 256 << 10, Sync: outlog.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := newRelay(l)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.base = t0
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	chunk := bytes.Repeat([]byte("z"), 16<<10)
	grow := func(past uint64) {
		for l.End() <= past {
			l.Append(chunk)
		}
	}
	type step struct {
		what string
		do   func()
		ms   int
		want time.Duration
	}
	ms := time.Millisecond
	for _, st := range []step{
		{"no server yet, log far ahead", func() { grow(2 * r.maxLag) }, 0, 0},
		{"the server connects at the start", func() { r.sent(0, at(0)) }, 0, relayStall},
		{"it takes nothing for 100 ms", nil, 100, relayStall - 100*ms},
		{"it takes a little, still behind", func() { r.sent(16<<10, at(150)) }, 200, relayStall - 50*ms},
		{"then nothing for relayStall", nil, 650, 0},
		{"a burst brings it within the bound", func() { r.sent(l.End()-r.maxLag/2, at(700)) }, 700, 0},
		{"the child prints past the bound again", func() { grow(l.End() + r.maxLag) }, 710, relayStall - 10*ms},
		{"the clock reads before the last send", nil, 600, relayStall},
		{"the child exits", r.childGone, 720, 0},
	} {
		if st.do != nil {
			st.do()
		}
		if got := r.pause(at(st.ms)); got != st.want {
			t.Errorf("%s (at %d ms): pause %v, want %v", st.what, st.ms, got, st.want)
		}
	}
	l.Release()
}
