package session

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/fdpass"
	"termkeep/internal/outlog"
	"termkeep/internal/wire"
)

// laneRig is a host whose holder is a socket the test plays, with its
// reader running, and a viewer of the given version that has handed over
// a real terminal and been given a lane.
type laneRig struct {
	t      *testing.T
	vh     *viewerHost
	h      *Host
	holder net.Conn
	hr     *bufio.Reader
	hbuf   []byte
	hw     *wire.Writer    // frames as the holder sends them
	vw     *wire.Writer    // frames as the viewer sends them
	cli    net.Conn        // the viewer's end
	frames chan wire.Frame // what the viewer gets
	start  uint64          // where the lane began
}

func newLaneRig(t *testing.T, viewerVersion, holderVersion int, opts ViewerOptions) *laneRig {
	t.Helper()
	vh := newViewerHost(t, outlog.Options{})
	vh.live([]byte("before\r\n"))
	h := vh.h
	holderSide := vh.holder(holderVersion)

	dup := laneTermFD(t)

	srv, cli := net.Pipe()
	done := make(chan error, 1)
	opts.Kind, opts.Local = "cli", true
	go func() {
		done <- h.ServeViewer(&fdConn{Conn: srv, fd: dup}, wire.Hello{Version: viewerVersion, Role: wire.RoleViewer, From: wire.FromEnd, Cols: 80, Rows: 24}, opts)
	}()
	t.Cleanup(func() { cli.Close(); <-done })
	r := &laneRig{t: t, vh: vh, h: h, holder: holderSide, hw: wire.NewWriter(holderSide), vw: wire.NewWriter(cli), cli: cli, frames: make(chan wire.Frame, 1024)}
	go func() {
		var buf []byte
		for {
			f, err := wire.ReadFrame(cli, &buf)
			if err != nil {
				close(r.frames)
				return
			}
			r.frames <- wire.Frame{Type: f.Type, Payload: bytes.Clone(f.Payload)}
		}
	}()
	if f := r.viewerNext(); f.Type != wire.TypeWelcome {
		t.Fatalf("first frame %s", f.Type)
	}
	hrc, _ := holderSide.(*net.UnixConn).SyscallConn()
	fr := fdpass.NewReader(hrc)
	t.Cleanup(func() { fr.Close() })
	r.hr = bufio.NewReader(fr)

	r.start = uint64(len(vh.out))
	if err := r.vw.Uint64(wire.TypeLane, r.start); err != nil {
		t.Fatal(err)
	}
	if f := r.holderNext(); f.Type != wire.TypeLane {
		t.Fatalf("the holder got %s, want a lane", f.Type)
	}
	if fd := fr.Take(); fd >= 0 {
		syscall.Close(fd)
	} else {
		t.Fatal("the lane came without a terminal")
	}
	return r
}

// viewerNext returns the next frame the viewer gets.
func (r *laneRig) viewerNext() wire.Frame {
	r.t.Helper()
	select {
	case f, ok := <-r.frames:
		if !ok {
			r.t.Fatal("the viewer's connection ended")
		}
		return f
	case <-time.After(20 * time.Second):
		r.t.Fatal("no frame for the viewer")
	}
	return wire.Frame{}
}

// viewerUntil returns the first frame of one of types the viewer gets,
// and the types of those before it.
func (r *laneRig) viewerUntil(types ...wire.Type) (wire.Frame, []wire.Type) {
	r.t.Helper()
	var before []wire.Type
	for {
		f := r.viewerNext()
		for _, ty := range types {
			if f.Type == ty {
				return f, before
			}
		}
		before = append(before, f.Type)
	}
}

// holderNext returns the next frame the holder gets, but for a resize
// (the size policy's) or a ping.
func (r *laneRig) holderNext() wire.Frame {
	r.t.Helper()
	for {
		r.holder.SetReadDeadline(time.Now().Add(10 * time.Second))
		f, err := wire.ReadFrame(r.hr, &r.hbuf)
		if err != nil {
			r.t.Fatalf("the holder got nothing: %v", err)
		}
		if f.Type != wire.TypeResize && f.Type != wire.TypePing {
			return f
		}
	}
}

// A viewer of version 9 whose process is known is told, once its lane
// runs, that it may hand the reading of its terminal to the holder; its
// answer makes the server ask the holder to read, for that process. An
// answer that comes after the lane ended asks nothing.
func TestInputLaneGranted(t *testing.T) {
	r := newLaneRig(t, 9, 9, ViewerOptions{Pid: os.Getpid()})
	if f, before := r.viewerUntil(wire.TypeLaneIn, wire.TypeLaneEnd); f.Type != wire.TypeLaneIn {
		t.Fatalf("the viewer got %s (after %v), want a lane-in", f.Type, before)
	}
	r.vw.Frame(wire.TypeLaneIn, nil)
	f := r.holderNext()
	if f.Type != wire.TypeLaneRead {
		t.Fatalf("the holder got %s, want a lane-read", f.Type)
	}
	if pid, err := wire.ParseLaneRead(f.Payload); err != nil || int(pid) != os.Getpid() {
		t.Fatalf("lane-read for %d (%v), want %d", pid, err, os.Getpid())
	}

	r.hw.Uint64(wire.TypeLaneEnd, r.start)
	if f, _ := r.viewerUntil(wire.TypeLaneEnd); f.Type != wire.TypeLaneEnd {
		t.Fatal("no lane-end")
	}
	// A lane-in on its way as the lane ended, then a key: the holder gets
	// the key and nothing before it.
	r.vw.Frame(wire.TypeLaneIn, nil)
	r.vw.Input([]byte("x"))
	if f := r.holderNext(); f.Type != wire.TypeInput || string(f.Payload) != "x" {
		t.Fatalf("the holder got %s %q, want only the input", f.Type, f.Payload)
	}
}

// A viewer of version 8 is never told of an input lane, and one that
// sends a lane-in anyway is refused as for any frame its version lacks.
func TestInputLaneNotForOldViewer(t *testing.T) {
	r := newLaneRig(t, 8, 9, ViewerOptions{Pid: os.Getpid()})
	r.hw.Uint64(wire.TypeLaneEnd, r.start)
	if _, before := r.viewerUntil(wire.TypeLaneEnd); bytes.Contains(typeBytes(before), []byte{byte(wire.TypeLaneIn)}) {
		t.Fatalf("a viewer of version 8 got a lane-in: %v", before)
	}
	r.vw.Frame(wire.TypeLaneIn, nil)
	f, _ := r.viewerUntil(wire.TypeError)
	if code, _, _ := wire.ParseError(f.Payload); code != wire.CodeMalformed {
		t.Fatalf("error code %d, want malformed", code)
	}
	for f := range r.frames {
		t.Fatalf("the viewer got %s after its refusal, want the connection closed", f.Type)
	}
}

// Nor is a viewer whose process is unknown, nor one under a holder of
// version 8: the lane is an output lane only.
func TestInputLaneNotWithoutPidOrHolder(t *testing.T) {
	for _, tc := range []struct {
		name        string
		pid, holder int
	}{{"pid unknown", 0, 9}, {"holder of version 8", os.Getpid(), 8}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLaneRig(t, 9, tc.holder, ViewerOptions{Pid: tc.pid})
			r.hw.Uint64(wire.TypeLaneEnd, r.start)
			if _, before := r.viewerUntil(wire.TypeLaneEnd); bytes.Contains(typeBytes(before), []byte{byte(wire.TypeLaneIn)}) {
				t.Fatalf("got a lane-in: %v", before)
			}
		})
	}
}

// A read-only viewer's lane-in is ignored: it owns no lane, and is not
// cut off for it.
func TestInputLaneReadOnlyIgnored(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	pv := vh.attach(wire.Hello{Version: 9, Role: wire.RoleViewer, From: wire.FromEnd}, ViewerOptions{ReadOnly: true, Pid: os.Getpid()})
	pv.welcome()
	w := wire.NewWriter(pv.c)
	w.Frame(wire.TypeLaneIn, nil)
	w.Uint64(wire.TypePing, 7)
	for {
		f := pv.next()
		if f.Type == wire.TypeError {
			_, msg, _ := wire.ParseError(f.Payload)
			t.Fatalf("error %q", msg)
		}
		if f.Type == wire.TypePong {
			return
		}
	}
}

// Keys the holder hands back reach the lane's viewer as lane-input, before
// the lane-end that follows them; handed back with no lane, they are
// written to the pty as input, never lost.
func TestInputLaneHandBack(t *testing.T) {
	r := newLaneRig(t, 9, 9, ViewerOptions{Pid: os.Getpid()})
	r.viewerUntil(wire.TypeLaneIn)
	r.vw.Frame(wire.TypeLaneIn, nil)
	if f := r.holderNext(); f.Type != wire.TypeLaneRead {
		t.Fatalf("the holder got %s, want a lane-read", f.Type)
	}
	r.hw.Frame(wire.TypeLaneInput, []byte("\x1b[A"))
	r.hw.Uint64(wire.TypeLaneEnd, r.start)
	f, before := r.viewerUntil(wire.TypeLaneInput, wire.TypeLaneEnd)
	if f.Type != wire.TypeLaneInput || string(f.Payload) != "\x1b[A" {
		t.Fatalf("the viewer got %s %q (after %v), want the keys handed back", f.Type, f.Payload, before)
	}
	if f, _ := r.viewerUntil(wire.TypeLaneEnd, wire.TypeLaneInput); f.Type != wire.TypeLaneEnd {
		t.Fatalf("then %s, want the lane-end", f.Type)
	}

	// No lane now: the holder's hand-back comes back to it as input.
	r.hw.Frame(wire.TypeLaneInput, []byte("ls\x03"))
	if f := r.holderNext(); f.Type != wire.TypeInput || string(f.Payload) != "ls\x03" {
		t.Fatalf("the holder got %s %q, want the keys as input", f.Type, f.Payload)
	}
}

// Keys handed back after the lane's viewer left, its lane not yet ended,
// are written to the pty as input.
func TestInputLaneHandBackAfterViewerLeft(t *testing.T) {
	r := newLaneRig(t, 9, 9, ViewerOptions{Pid: os.Getpid()})
	r.viewerUntil(wire.TypeLaneIn)
	r.cli.Close()
	if f := r.holderNext(); f.Type != wire.TypeLaneOff {
		t.Fatalf("the holder got %s, want a lane-off", f.Type)
	}
	r.hw.Frame(wire.TypeLaneInput, []byte("q"))
	if f := r.holderNext(); f.Type != wire.TypeInput || string(f.Payload) != "q" {
		t.Fatalf("the holder got %s %q, want the keys as input", f.Type, f.Payload)
	}
}

// What the lane typed counts as the lane's viewer's typing: the session's
// input time and byte counts, and the size policy's activity.
func TestInputLaneTyped(t *testing.T) {
	r := newLaneRig(t, 9, 9, ViewerOptions{Pid: os.Getpid()})
	r.viewerUntil(wire.TypeLaneIn)
	before := time.Now()
	r.hw.Uint64(wire.TypeLaneTyped, 5)
	r.hw.Uint64(wire.TypeLaneTyped, 3)
	deadline := time.Now().Add(10 * time.Second)
	for r.h.Counters().InputBytes != 8 {
		if time.Now().After(deadline) {
			t.Fatalf("input bytes %d, want 8", r.h.Counters().InputBytes)
		}
		time.Sleep(2 * time.Millisecond)
	}
	h := r.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.usage.input.Before(before) {
		t.Errorf("the session's input time %v, not stamped", h.usage.input)
	}
	if h.meter.InputBytes.Load() != 8 {
		t.Errorf("metered input %d, want 8", h.meter.InputBytes.Load())
	}
	for v := range h.room.viewers {
		if v.sz.Active.Before(before) {
			t.Errorf("the lane's viewer last active %v: its typing was not seen by the size policy", v.sz.Active)
		}
	}
}

func typeBytes(ts []wire.Type) []byte {
	b := make([]byte, len(ts))
	for i, ty := range ts {
		b[i] = byte(ty)
	}
	return b
}
