//go:build linux

package attach

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/client"
	"termkeep/internal/fdpass"
	"termkeep/internal/statedir"
	"termkeep/internal/wire"
)

// fakeServer is the server's side of one attach, speaking to it as the
// server and the holder of an input lane would: it takes the terminal that
// comes with the lane offer and reads it itself.
type fakeServer struct {
	t    *testing.T
	conn *net.UnixConn
	fr   *fdpass.Reader
	r    *bufio.Reader
	w    *wire.Writer
	buf  []byte
	term int // the terminal attach handed over
}

// next returns the next frame of a type in want, skipping the others
// attach sends meanwhile (its size, pongs).
func (s *fakeServer) next(want ...wire.Type) wire.Frame {
	s.t.Helper()
	s.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		f, err := wire.ReadFrame(s.r, &s.buf)
		if err != nil {
			s.t.Fatalf("waiting for %v: %v", want, err)
		}
		for _, w := range want {
			if f.Type == w {
				return f
			}
		}
		if f.Type == wire.TypeInput || f.Type == wire.TypeLaneIn || f.Type == wire.TypeLaneOff || f.Type == wire.TypeLane {
			s.t.Fatalf("got %v %q, want %v", f.Type, f.Payload, want)
		}
	}
}

// input returns the next input frame, past offers without a terminal.
func (s *fakeServer) input() wire.Frame {
	s.t.Helper()
	for {
		f := s.next(wire.TypeInput, wire.TypeLane)
		if f.Type == wire.TypeInput {
			return f
		}
		if fd := s.fr.Take(); fd >= 0 {
			unix.Close(fd)
			s.t.Fatal("a later offer carried the terminal again")
		}
	}
}

// none fails when attach sends a frame of a lane or input within d.
func (s *fakeServer) none(d time.Duration) {
	s.t.Helper()
	s.conn.SetReadDeadline(time.Now().Add(d))
	for {
		f, err := wire.ReadFrame(s.r, &s.buf)
		if err != nil {
			return // the deadline
		}
		switch f.Type {
		case wire.TypeInput, wire.TypeLaneIn, wire.TypeLaneOff, wire.TypeLane:
			s.t.Fatalf("attach sent %v %q", f.Type, f.Payload)
		}
	}
}

// readTerm reads n bytes from the handed terminal, as the holder would.
func (s *fakeServer) readTerm(n int) string {
	s.t.Helper()
	var got []byte
	deadline := time.Now().Add(5 * time.Second)
	b := make([]byte, 64)
	for len(got) < n && time.Now().Before(deadline) {
		fds := []unix.PollFd{{Fd: int32(s.term), Events: unix.POLLIN}}
		unix.Poll(fds, 100)
		if k, err := unix.Read(s.term, b); k > 0 && err == nil {
			got = append(got, b[:k]...)
		}
	}
	return string(got)
}

// attach's half of the input lane against its contract (wire/lanein.go):
// on a lane-in it stops reading its terminal and answers; the keys typed
// then are the holder's to read; a lane-input is taken as typed and
// answered with input, then lane-in; at the lane-end it reads again; a
// detach key handed back detaches, with no lane-in after it.
func TestAttachInputLane(t *testing.T) {
	ptmx, tty := testTerminal(t, true)
	dir := statedir.Dir(t.TempDir())
	if err := dir.Ensure(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", dir.Socket())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	t.Setenv("TERMKEEP_ECHO_LANE", "")
	// The pty is not the test's controlling terminal: attach could not be
	// seen to have it (TestRawTermLeads), and would take no input lane.
	leadsTerminal = func(*rawTerm) bool { return true }
	defer func() { leadsTerminal = (*rawTerm).leads }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		c := client.New(dir)
		open := func(ctx context.Context, h wire.Hello, _ func(string)) (*client.Stream, error) {
			return c.Attach(ctx, "s1", h)
		}
		ended <- Run(ctx, Config{Ref: "s1", In: tty, Out: tty, Open: open, DetachKey: 0x1c, Name: "attach test"})
	}()

	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	uc := c.(*net.UnixConn)
	rc, _ := uc.SyscallConn()
	s := &fakeServer{t: t, conn: uc, fr: fdpass.NewReader(rc), w: wire.NewWriter(c), term: -1}
	defer s.fr.Close()
	s.r = bufio.NewReader(s.fr)
	if _, err := http.ReadRequest(s.r); err != nil {
		t.Fatal(err)
	}
	s.next(wire.TypeHello)
	c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: termkeep-wire\r\nConnection: Upgrade\r\n\r\n"))
	s.w.JSON(wire.TypeWelcome, wire.Welcome{Version: wire.Version, Session: "s1", Cols: 80, Rows: 24})
	s.w.Output(0, []byte("$ "))

	s.next(wire.TypeLane)
	if s.term = s.fr.Take(); s.term < 0 {
		t.Fatal("the first lane offer came without the terminal")
	}
	defer unix.Close(s.term)
	unix.SetNonblock(s.term, true)

	// Before any lane-in attach reads its terminal.
	ptmx.Write([]byte("a"))
	if f := s.next(wire.TypeInput); string(f.Payload) != "a" {
		t.Fatalf("input %q before the lane-in", f.Payload)
	}
	s.w.Frame(wire.TypeLaneIn, nil)
	s.next(wire.TypeLaneIn)
	ptmx.Write([]byte("bc"))
	if got := s.readTerm(2); got != "bc" {
		t.Fatalf("the holder read %q from the terminal, want what was typed", got)
	}
	s.none(100 * time.Millisecond)

	// A hand-back: taken as typed, then lane-in again, in that order.
	s.w.Frame(wire.TypeLaneInput, []byte("\x1b[A"))
	if f := s.next(wire.TypeInput); string(f.Payload) != "\x1b[A" {
		t.Fatalf("input %q for the hand-back", f.Payload)
	}
	s.next(wire.TypeLaneIn)
	// A second server's lane-in for the same lane is not answered.
	s.w.Frame(wire.TypeLaneIn, nil)
	ptmx.Write([]byte("d"))
	if got := s.readTerm(1); got != "d" {
		t.Fatalf("after the hand-back the holder read %q", got)
	}
	s.none(100 * time.Millisecond)

	// Typed before the lane-end and not read by the holder: attach reads
	// it once the lane ends, once.
	ptmx.Write([]byte("ef"))
	time.Sleep(50 * time.Millisecond)
	s.w.Uint64(wire.TypeLaneEnd, 2)
	// attach reads again, and offers again (in either order).
	for range 2 {
		f := s.next(wire.TypeInput, wire.TypeLane)
		if f.Type == wire.TypeInput && string(f.Payload) != "ef" {
			t.Fatalf("input %q after the lane-end", f.Payload)
		}
		if f.Type == wire.TypeLane {
			if fd := s.fr.Take(); fd >= 0 {
				unix.Close(fd)
				t.Fatal("a second offer carried the terminal again")
			}
		}
	}
	// A stale lane-in (its lane ended) and a stale lane-input: the bytes
	// are taken, nothing is answered.
	// In one write: between frames read apart attach would offer again,
	// and a lane-in after an offer is not stale.
	var stale bytes.Buffer
	sw := wire.NewWriter(&stale)
	sw.Uint64(wire.TypeLaneEnd, 2)
	sw.Frame(wire.TypeLaneIn, nil)
	sw.Frame(wire.TypeLaneInput, []byte("g"))
	if _, err := c.Write(stale.Bytes()); err != nil {
		t.Fatal(err)
	}
	if f := s.input(); string(f.Payload) != "g" {
		t.Fatalf("input %q for a stale hand-back", f.Payload)
	}
	ptmx.Write([]byte("h"))
	if f := s.input(); string(f.Payload) != "h" {
		t.Fatalf("input %q after a stale lane-in", f.Payload)
	}

	// A new lane (attach offered again after the lane-end nobody asked
	// for); a detach key handed back detaches: no lane-in after it.
	s.w.Frame(wire.TypeLaneIn, nil)
	s.next(wire.TypeLaneIn)
	s.w.Frame(wire.TypeLaneInput, []byte("q\x1c"))
	if f := s.next(wire.TypeInput); string(f.Payload) != "q" {
		t.Fatalf("input %q before the detach key", f.Payload)
	}
	s.next(wire.TypeLaneOff)
	s.w.Uint64(wire.TypeLaneEnd, 2)
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("attach ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("attach did not detach")
	}
}
