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
	r.sent(0)
	done := waited()
	for off := uint64(0); off+r.maxLag < l.End(); off += 16 << 10 {
		select {
		case d := <-done:
			t.Fatalf("the reader went on after %v with the server %d behind", d, l.End()-off)
		case <-time.After(50 * time.Millisecond):
		}
		r.sent(off)
	}
	r.sent(l.End())
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the reader still waits with the server caught up")
	}

	// A server that stops taking output is waited for relayStall at most.
	r.sent(0)
	if d := <-waited(); d < relayStall/2 || d > relayStall+5*time.Second {
		t.Fatalf("waited %v for a stalled server, want about %v", d, relayStall)
	}

	// Once the child is gone its last bytes are read at once.
	r.sent(0)
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
