package session

import (
	"bytes"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/testclock"
	"termkeep/internal/wire"
)

// viewerHost is a host over a real output log in a temporary directory,
// with no holder: the test writes the log itself, as the holder does, and
// hands the host what the holder would forward.
type viewerHost struct {
	t   *testing.T
	h   *Host
	log *outlog.Log
	out []byte // everything logged
}

func newViewerHost(t *testing.T, opts outlog.Options) *viewerHost {
	t.Helper()
	return newViewerHostOn(t, opts, nil)
}

// newViewerHostOn is newViewerHost with the host on the clock now (nil:
// time.Now).
func newViewerHostOn(t *testing.T, opts outlog.Options, now func() time.Time) *viewerHost {
	t.Helper()
	dir := t.TempDir()
	l, err := outlog.Open(filepath.Join(dir, "log"), opts) // the holder's LogDir
	if err != nil {
		t.Fatal(err)
	}
	h := New(Config{ID: "v", Dir: dir, Now: now})
	t.Cleanup(func() {
		h.Close()
		l.Close()
	})
	return &viewerHost{t: t, h: h, log: l}
}

// logged appends p to the log only: output the server has not been sent
// (it was down when it was printed).
func (vh *viewerHost) logged(p []byte) {
	vh.t.Helper()
	if _, err := vh.log.Append(p); err != nil {
		vh.t.Fatal(err)
	}
	if err := vh.log.Sync(); err != nil {
		vh.t.Fatal(err)
	}
	vh.out = append(vh.out, p...)
}

// connected sets the host where a server that connects now starts: at the
// log's end, with nothing in its window.
func (vh *viewerHost) connected() {
	vh.h.mu.Lock()
	vh.h.end = uint64(len(vh.out))
	vh.h.win.Reset(vh.h.end)
	vh.h.mu.Unlock()
}

// holder connects the host, at 80x24, to a holder of the given version
// that the test plays, with the host's reader running; it returns the
// holder's end of the socket.
func (vh *viewerHost) holder(version int) net.Conn {
	vh.t.Helper()
	srvSide, holderSide := unixPair(vh.t)
	h := vh.h
	up := newHolderConn(srvSide, 5*time.Second)
	up.version = version
	h.mu.Lock()
	h.up = up
	h.size.cols, h.size.rows = 80, 24
	h.closer.readers.Add(1)
	h.mu.Unlock()
	go h.readHolder(up)
	vh.t.Cleanup(h.Close) // before the sockets close: no reconnect
	return holderSide
}

// live logs p and forwards it to the host, as the holder does.
func (vh *viewerHost) live(p []byte) {
	vh.t.Helper()
	off := uint64(len(vh.out))
	vh.logged(p)
	vh.h.appendOutput(off, bytes.Clone(p))
}

// attach serves one viewer over a pipe and returns the viewer's end. The
// server's side is closed, and ServeViewer waited for, when the test ends.
func (vh *viewerHost) attach(hello wire.Hello, opts ViewerOptions) *pipeViewer {
	vh.t.Helper()
	srv, cli := net.Pipe()
	done := make(chan struct{})
	pv := &pipeViewer{t: vh.t, c: cli, done: done}
	go func() { defer close(done); pv.err = vh.h.ServeViewer(srv, hello, opts) }()
	vh.t.Cleanup(func() {
		cli.Close()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			vh.t.Error("ServeViewer did not return after the viewer left")
		}
	})
	return pv
}

type pipeViewer struct {
	t    *testing.T
	c    net.Conn
	buf  []byte
	done chan struct{} // closed when ServeViewer has returned
	err  error         // what it returned
}

// next reads the next frame, failing the test after a generous deadline.
func (pv *pipeViewer) next() wire.Frame {
	pv.t.Helper()
	pv.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	f, err := wire.ReadFrame(pv.c, &pv.buf)
	if err != nil {
		pv.t.Fatalf("read frame: %v", err)
	}
	return f
}

// welcome reads the Welcome.
func (pv *pipeViewer) welcome() wire.Welcome {
	pv.t.Helper()
	f := pv.next()
	var w wire.Welcome
	if f.Type != wire.TypeWelcome || wire.ParseJSON(f.Payload, &w) != nil {
		pv.t.Fatalf("first frame %s, want a welcome", f.Type)
	}
	return w
}

// A viewer that resumes from an offset gets exactly the bytes from there:
// those behind the window from the log on disk, then live ones from the
// window, then the exit.
func TestServeViewerResumesExactly(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	for i := range 3 << 10 {
		vh.logged(bytes.Repeat([]byte{byte('a' + i%26)}, 1024))
	}
	vh.connected()
	pv := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: 1000}, ViewerOptions{})
	w := pv.welcome()
	if w.Resume != wire.ResumeBytes || w.Start != 1000 || w.End != uint64(len(vh.out)) {
		t.Fatalf("welcome %+v, want bytes from 1000 to %d", w, len(vh.out))
	}
	next := uint64(1000)
	var got []byte
	liveSent := false
	for {
		f := pv.next()
		switch f.Type {
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(f.Payload)
			if off != next {
				t.Fatalf("output at %d, want %d", off, next)
			}
			got = append(got, data...)
			next += uint64(len(data))
		case wire.TypeExit:
			if !bytes.Equal(got, vh.out[1000:]) {
				t.Fatalf("the viewer got %d bytes that differ from the %d logged", len(got), len(vh.out)-1000)
			}
			return
		case wire.TypeViewers, wire.TypeServerPing:
		default:
			t.Fatalf("unexpected %s frame", f.Type)
		}
		if !liveSent && next == uint64(len(vh.out)) {
			liveSent = true
			vh.live([]byte("live output, from the window\r\n"))
			vh.h.MarkEnded(wire.Exit{State: "exited"})
		}
	}
}

// A viewer that stops reading while the output floods is skipped to the
// present with a snapshot; it is never waited for. It reads slowly by the
// host's clock, which the test moves.
func TestServeViewerResyncsAStalledViewer(t *testing.T) {
	clock := testclock.New(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	vh := newViewerHostOn(t, outlog.Options{}, clock.Now)
	vh.connected()
	pv := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromEnd}, ViewerOptions{Queue: 64 << 10})
	if w := pv.welcome(); w.Resume != wire.ResumeLive {
		t.Fatalf("welcome %+v, want live", w)
	}
	line := bytes.Repeat([]byte("x"), 1023)
	line = append(line, '\n')
	for range 8 << 10 { // 8 MiB that nobody waits for the viewer to read
		vh.live(line)
	}
	end := uint64(len(vh.out))
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		f := pv.next()
		switch f.Type {
		case wire.TypeSnapshot:
			off, _, _ := wire.ParseOutput(f.Payload)
			if off < end {
				t.Fatalf("snapshot at %d, before the end %d it was taken at", off, end)
			}
			if n := vh.h.Resyncs(); n != 1 {
				t.Fatalf("%d resyncs counted, want 1", n)
			}
			return
		case wire.TypeOutput:
			// Reads slowly: at this pace what is behind it takes far
			// longer than 2 s to read.
			clock.Advance(200 * time.Millisecond)
		}
	}
	t.Fatal("a viewer that stopped reading was not resynced within a minute")
}

// A resume from an offset the log's retention dropped: a viewer gets the
// screen as it is; a waiter, which reads raw bytes, is told of the gap and
// gets the oldest bytes kept.
func TestServeViewerResumeFromTrimmedOffset(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{Retention: 256 << 10, SegmentSize: 64 << 10})
	for i := range 1 << 10 {
		vh.logged([]byte(strings.Repeat(string(rune('a'+i%26)), 1023) + "\n"))
	}
	vh.connected()
	ro, err := vh.h.outlog()
	if err != nil {
		t.Fatal(err)
	}
	ro.Refresh()
	first := ro.First()
	if first == 0 {
		t.Fatal("retention dropped nothing")
	}

	pv := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: 0}, ViewerOptions{})
	w := pv.welcome()
	if w.Resume != wire.ResumeSnapshot || w.First != first {
		t.Fatalf("welcome %+v, want a snapshot (log from %d)", w, first)
	}
	for f := pv.next(); f.Type != wire.TypeSnapshot; f = pv.next() {
		if f.Type == wire.TypeOutput {
			t.Fatalf("output before the snapshot")
		}
	}

	wv := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleWaiter, From: 0}, ViewerOptions{})
	w = wv.welcome()
	if w.Resume != wire.ResumeBytes || w.Start != first {
		t.Fatalf("waiter's welcome %+v, want bytes from %d", w, first)
	}
	f := wv.next()
	from, to, err := wire.ParseGap(f.Payload)
	if f.Type != wire.TypeGap || err != nil || from != 0 || to != first {
		t.Fatalf("waiter's first frame %s [%d, %d), want a gap [0, %d)", f.Type, from, to, first)
	}
	f = wv.next()
	off, data, _ := wire.ParseOutput(f.Payload)
	if f.Type != wire.TypeOutput || off != first || !bytes.Equal(data, vh.out[first:first+uint64(len(data))]) {
		t.Fatalf("after the gap: %s at %d, want the log's bytes from %d", f.Type, off, first)
	}
}

// A resume from beyond the session's end is refused with an error the
// viewer can act on, and nothing else is sent.
func TestServeViewerResumeFromTheFuture(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	vh.logged([]byte("hello\r\n"))
	vh.connected()
	pv := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: 1 << 40}, ViewerOptions{})
	f := pv.next()
	code, msg, _ := wire.ParseError(f.Payload)
	if f.Type != wire.TypeError || code != wire.CodeUnavailable || !strings.Contains(msg, "beyond the session's end (7)") {
		t.Fatalf("got %s %d %q, want an unavailable error naming the end", f.Type, code, msg)
	}
	select {
	case <-pv.done:
		if pv.err == nil {
			t.Fatal("ServeViewer returned no error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ServeViewer did not return")
	}
	if _, err := wire.ReadFrame(pv.c, &pv.buf); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("after the error: %v, want the connection closed", err)
	}
}

// A viewer of a host that was closed under it (a restore replaced the
// host, or the server is stopping) is let go without an error, so that
// its client reconnects and reaches the session's new host; an error
// frame would end a `termkeep wait` with "log is closed".
func TestServeViewerOfAClosedHostLetsGo(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	for range 64 {
		vh.logged(bytes.Repeat([]byte{'x'}, 1024))
	}
	vh.connected()
	vh.h.Close()
	pv := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: 0}, ViewerOptions{})
	pv.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		f, err := wire.ReadFrame(pv.c, &pv.buf)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the viewer of a closed host was not let go")
			}
			return
		}
		if f.Type == wire.TypeError {
			t.Fatalf("the viewer of a closed host got an error: %q", f.Payload)
		}
	}
}
