//go:build linux

package client

import (
	"bufio"
	"os"
	"syscall"
	"testing"

	"termkeep/internal/fdpass"
	"termkeep/internal/fdpass/fdpasstest"
	"termkeep/internal/wire"
)

// streamPair is a Stream on one end of a unix socket pair and a reader of
// the other, which keeps the descriptors that come with the frames.
func streamPair(t *testing.T) (*Stream, *bufio.Reader, *fdpass.Reader) {
	t.Helper()
	a, b := fdpasstest.Pair(t)
	rc, err := b.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fr := fdpass.NewReader(rc)
	t.Cleanup(fr.Close)
	s := &Stream{conn: a, r: bufio.NewReader(a), w: wire.NewWriter(a)}
	return s, bufio.NewReader(fr), fr
}

// The viewer's lane frames: an offer with the terminal's descriptor and
// one without, a lane-off, and the input lane's lane-in, with no payload.
func TestStreamLaneFrames(t *testing.T) {
	s, r, fr := streamPair(t)
	term, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	if err := s.OfferLane(7, int(term.Fd())); err != nil {
		t.Fatal(err)
	}
	if err := s.OfferLane(9, -1); err != nil {
		t.Fatal(err)
	}
	if err := s.WithdrawLane(); err != nil {
		t.Fatal(err)
	}
	if err := s.LaneIn(); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	next := func() wire.Frame {
		t.Helper()
		f, err := wire.ReadFrame(r, &buf)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, want := range []uint64{7, 9} {
		f := next()
		if f.Type != wire.TypeLane {
			t.Fatalf("got %v, want a lane frame", f.Type)
		}
		if at, err := wire.ParseUint64(wire.TypeLane, f.Payload); err != nil || at != want {
			t.Fatalf("lane at %d (%v), want %d", at, err, want)
		}
		fd := fr.Take()
		if want == 7 {
			var a, b syscall.Stat_t
			if fd < 0 || syscall.Fstat(fd, &a) != nil || syscall.Fstat(int(term.Fd()), &b) != nil || a.Rdev != b.Rdev || a.Ino != b.Ino {
				t.Fatalf("the offer at 7 came with descriptor %d, not the terminal", fd)
			}
			syscall.Close(fd)
		} else if fd >= 0 {
			t.Fatalf("the offer at 9 came with a descriptor")
		}
	}
	if f := next(); f.Type != wire.TypeLaneOff || len(f.Payload) != 0 {
		t.Fatalf("got %v %q, want an empty lane-off", f.Type, f.Payload)
	}
	if f := next(); f.Type != wire.TypeLaneIn || len(f.Payload) != 0 {
		t.Fatalf("got %v %q, want an empty lane-in", f.Type, f.Payload)
	}
}
