package session

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"termkeep/internal/fdpass"
	"termkeep/internal/outlog"
	"termkeep/internal/wire"
)

// fdConn is a viewer connection that hands over one terminal (as
// server.sock's reader does for attach).
type fdConn struct {
	net.Conn
	fd int
}

func (c *fdConn) Take() int { fd := c.fd; c.fd = -1; return fd }

// A viewer's lane, against a real holder socket and terminal: the server
// hands the holder the viewer's terminal at the viewer's offer, sends the
// viewer nothing while the lane runs (a flood past the window among it),
// revokes it when the size changes, and at its end sends the bytes the
// lane wrote as lane-written frames, the size change in its place, from
// the log where the window let them go, then a lane-end and the output
// after it: every byte once, in order.
func TestViewerLaneHoldsAndResumes(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	vh.live([]byte("before\r\n"))
	srvSide, holderSide := unixPair(t)
	h := vh.h
	h.mu.Lock()
	h.up = newHolderConn(srvSide, 5*time.Second)
	h.up.version = 7
	h.size.cols, h.size.rows = 80, 24
	h.mu.Unlock()

	dup := laneTermFD(t)

	srv, cli := net.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- h.ServeViewer(&fdConn{Conn: srv, fd: dup}, wire.Hello{Version: 8, Role: wire.RoleViewer, From: wire.FromEnd, Cols: 80, Rows: 24}, ViewerOptions{Kind: "cli", Local: true})
	}()
	t.Cleanup(func() { cli.Close(); <-done })
	// The viewer's side reads all the while, as a socket's buffer would
	// take what the server sends (a pipe holds nothing).
	frames := make(chan wire.Frame, 1024)
	go func() {
		var buf []byte
		for {
			f, err := wire.ReadFrame(cli, &buf)
			if err != nil {
				close(frames)
				return
			}
			frames <- wire.Frame{Type: f.Type, Payload: bytes.Clone(f.Payload)}
		}
	}()
	next := func() wire.Frame {
		t.Helper()
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatal("the viewer's connection ended")
			}
			return f
		case <-time.After(20 * time.Second):
			t.Fatal("no frame for the viewer")
		}
		return wire.Frame{}
	}
	if f := next(); f.Type != wire.TypeWelcome {
		t.Fatalf("first frame %s", f.Type)
	}
	w := wire.NewWriter(cli)
	start := uint64(len(vh.out))
	if err := w.Uint64(wire.TypeLane, start); err != nil {
		t.Fatal(err)
	}

	// The holder's side gets the lane at the viewer's offset, with a
	// terminal.
	hrc, _ := holderSide.(*net.UnixConn).SyscallConn()
	fr := fdpass.NewReader(hrc)
	defer fr.Close()
	hr := bufio.NewReader(fr)
	var hbuf []byte
	holderSide.SetReadDeadline(time.Now().Add(10 * time.Second))
	f, err := wire.ReadFrame(hr, &hbuf)
	if err != nil || f.Type != wire.TypeLane {
		t.Fatalf("the holder got %v %v, want a lane", f.Type, err)
	}
	if at, _ := wire.ParseUint64(f.Type, f.Payload); at != start {
		t.Fatalf("a lane at %d, want %d", at, start)
	}
	fd := fr.Take()
	if fd < 0 || !fdpass.NonBlockingTerminal(fd) {
		t.Fatalf("the lane came with %d, not the viewer's terminal", fd)
	}
	syscall.Close(fd)

	// A flood past the window while the lane runs, and a size change in it.
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	for range 24 {
		vh.live(chunk)
	}
	resizeAt := uint64(len(vh.out))
	h.mu.Lock()
	h.size.resized(resizeAt, 100, 30)
	h.viewersChangedLocked()
	h.mu.Unlock()
	vh.live([]byte("at 100x30\r\n"))

	// The size change revokes the lane.
	holderSide.SetReadDeadline(time.Now().Add(10 * time.Second))
	if f, err := wire.ReadFrame(hr, &hbuf); err != nil || f.Type != wire.TypeLaneOff {
		t.Fatalf("the holder got %v %v, want a lane-off", f.Type, err)
	}
	laneEnd := resizeAt + 5 // the lane wrote a little past the resize
	vh.live([]byte("after the lane\r\n"))
	h.laneEnded(laneEnd)

	var written, output []byte
	var resized uint64
	sawEnd := false
	for !sawEnd || uint64(len(written)+len(output)) < uint64(len(vh.out))-start {
		f := next()
		switch f.Type {
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(f.Payload)
			if !sawEnd {
				t.Fatalf("output at %d while the lane ran", off)
			}
			if off != laneEnd+uint64(len(output)) {
				t.Fatalf("output at %d, want %d", off, laneEnd+uint64(len(output)))
			}
			output = append(output, data...)
		case wire.TypeLaneWritten:
			off, data, _ := wire.ParseOutput(f.Payload)
			if sawEnd || off != start+uint64(len(written)) {
				t.Fatalf("lane-written at %d (after its end: %v), want %d", off, sawEnd, start+uint64(len(written)))
			}
			written = append(written, data...)
		case wire.TypeResized:
			off, cols, _, _ := wire.ParseResized(f.Payload)
			if cols == 100 {
				if off != resizeAt || start+uint64(len(written)) != resizeAt {
					t.Fatalf("resized at %d after %d written bytes, want at %d in its place", off, len(written), resizeAt)
				}
				resized = off
			}
		case wire.TypeLaneEnd:
			at, _ := wire.ParseUint64(f.Type, f.Payload)
			if at != laneEnd || start+uint64(len(written)) != laneEnd {
				t.Fatalf("lane-end at %d after %d written bytes, want %d", at, len(written), laneEnd)
			}
			sawEnd = true
		}
	}
	if resized == 0 {
		t.Fatal("the size change was not told among the lane's bytes")
	}
	if got := append(written, output...); !bytes.Equal(got, vh.out[start:]) {
		t.Fatalf("the viewer got %d bytes, not the %d after its offer", len(got), len(vh.out[start:]))
	}
}

// laneTermFD is a terminal for a lane as attach hands it over: a raw
// descriptor of its own, non-blocking (attach's own open is), of a pty
// that lives as long as the test.
func laneTermFD(t *testing.T) int {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	term, err := os.OpenFile(tty.Name(), os.O_RDWR|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	rc, _ := term.SyscallConn()
	dup := -1
	rc.Control(func(fd uintptr) { dup, _ = syscall.Dup(int(fd)) })
	return dup
}
