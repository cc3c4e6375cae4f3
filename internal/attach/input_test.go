package attach

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeStream records what reaches a connection, or refuses everything once
// broken, as a stream to a killed server does.
type fakeStream struct {
	mu     sync.Mutex
	got    []string
	broken bool
}

func (f *fakeStream) Input(b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.broken {
		return errors.New("broken pipe")
	}
	f.got = append(f.got, string(b))
	return nil
}

func (f *fakeStream) text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.got, "")
}

// Keystrokes typed while a connection breaks reach the next one, in order
// and once, whichever path (direct or queued) each took.
func TestInputPathKeepsKeystrokesAcrossReconnect(t *testing.T) {
	p := newInputPath(nil)
	old := &fakeStream{}
	p.connected(old)
	p.send([]byte("echo "))
	old.mu.Lock()
	old.broken = true // the server is killed; the attach loop has not noticed
	old.mu.Unlock()

	p.send([]byte("t")) // direct write fails: queued
	p.send([]byte("wo"))
	// The attach loop takes queued keystrokes while still holding the old
	// stream: it picked input before the broken connection's end.
	p.queued(old, <-p.ch)
	// Now it notices the end and reconnects.
	p.connected(nil)
	p.send([]byte("-2")) // typed while reconnecting
	neu := &fakeStream{}
	p.connected(neu)
	p.queued(neu, <-p.ch)
	p.queued(neu, <-p.ch)
	p.send([]byte("2\r")) // direct again

	if got := old.text(); got != "echo " {
		t.Fatalf("old stream got %q, want %q", got, "echo ")
	}
	if got := neu.text(); got != "two-22\r" {
		t.Fatalf("new stream got %q, want %q", got, "two-22\r")
	}
	if len(p.ch) != 0 {
		t.Fatalf("%d keystrokes left queued", len(p.ch))
	}
}

// A keystroke that a broken stream refused is never sent twice.
func TestInputPathHeldOnce(t *testing.T) {
	p := newInputPath(nil)
	old := &fakeStream{broken: true}
	p.connected(old)
	p.send([]byte("a"))
	p.queued(old, <-p.ch)
	p.send([]byte("b"))
	p.queued(old, <-p.ch)
	neu := &fakeStream{}
	p.connected(neu)
	p.connected(neu) // a second call flushes nothing more
	p.send([]byte("c"))
	if got := neu.text(); got != "abc" {
		t.Fatalf("new stream got %q, want %q", got, "abc")
	}
}

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func newFakeClock() *fakeClock           { return &fakeClock{t: time.Unix(1000, 0)} }
func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }

// Keys typed during an outage reach the next connection only when it came
// within keyHold; after a longer one they are dropped and counted, those
// held from before it too, and what is typed afterwards goes as usual.
func TestInputPathOutageBound(t *testing.T) {
	cases := []struct {
		name    string
		outage  time.Duration
		want    string
		dropped int
	}{
		{"a server restart", 300 * time.Millisecond, "held-during-after", 0},
		{"at the bound", keyHold, "held-during-after", 0},
		{"just past it", keyHold + time.Millisecond, "after", len("held-during-")},
		{"a ten-second outage", 10 * time.Second, "after", len("held-during-")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := newFakeClock()
			p := newInputPath(clk.now)
			old := &fakeStream{broken: true} // killed; attach has not noticed
			p.connected(old)
			p.send([]byte("held-"))
			p.queued(old, <-p.ch)
			p.connected(nil) // attach notices
			clk.add(c.outage / 2)
			p.send([]byte("during-"))
			clk.add(c.outage - c.outage/2)
			neu := &fakeStream{}
			p.connected(neu)
			p.queued(neu, <-p.ch)
			p.send([]byte("after"))
			if got := neu.text(); got != c.want {
				t.Errorf("the new connection got %q, want %q", got, c.want)
			}
			if got := p.takeDropped(); got != c.dropped {
				t.Errorf("dropped %d bytes, want %d", got, c.dropped)
			}
			if p.takeDropped() != 0 {
				t.Error("the count is not reset once taken")
			}
		})
	}
}

// A chunk is taken alike whether attach read it or a lane handed it back:
// up to the detach key it goes to the session, the key detaches, and a
// second detach key (from the other path) closes nothing twice.
func TestInputTakeDetachKey(t *testing.T) {
	p := newInputPath(nil)
	s := &fakeStream{}
	p.connected(s)
	d := newDetacher()
	for _, c := range []struct {
		in     string
		key    int
		detach bool
	}{
		{"ls\r", 0x1c, false},
		{"", 0x1c, false},
		{"\x1c", -1, false}, // no detach key: the byte is typed
		{"ab\x1ccd", 0x1c, true},
		{"\x1c", 0x1c, true},
	} {
		if got := p.take([]byte(c.in), c.key, d); got != c.detach {
			t.Fatalf("take %q: detached %v, want %v", c.in, got, c.detach)
		}
	}
	select {
	case <-d.ch:
	default:
		t.Fatal("the detach key did not detach")
	}
	if got := s.text(); got != "ls\r\x1cab" {
		t.Fatalf("the session got %q", got)
	}
}
