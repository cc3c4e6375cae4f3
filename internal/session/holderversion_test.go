package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// v1Holder is a holder of the first release (protocol version 1) as a
// server meets it on its socket: it welcomes with version 1, forwards what
// it logs, and accepts only the frames that release knew. Any other frame
// it refuses with an error and hangs up, as that release did.
type v1Holder struct {
	t   *testing.T
	ln  net.Listener
	log *outlog.Log

	mu      sync.Mutex
	conns   int
	got     []wire.Type
	refused []wire.Type
	c       net.Conn
	input   chan []byte
	// version is what it welcomes with (1 unless a test says otherwise).
	version int
	// also are frames it takes beyond v1Accepts, without answering.
	also map[wire.Type]bool
}

// v1Accepts are the frames toward the pty the first release knew.
var v1Accepts = map[wire.Type]bool{
	wire.TypeInput: true, wire.TypeResize: true, wire.TypeSignal: true,
	wire.TypeClose: true, wire.TypeAck: true, wire.TypePing: true,
}

func startV1Holder(t *testing.T, dir string) *v1Holder {
	t.Helper()
	l, err := outlog.Open(filepath.Join(dir, "log"), outlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A first-release meta.json: no protocol version in it.
	if err := sessiondir.WriteMeta(dir, sessiondir.Meta{ID: "old", HolderPid: os.Getpid(), Pid: os.Getpid(), Cols: 80, Rows: 24}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, sessiondir.SocketFile))
	if err != nil {
		t.Fatal(err)
	}
	fh := &v1Holder{t: t, ln: ln, log: l, input: make(chan []byte, 16), version: 1}
	go fh.accept()
	t.Cleanup(func() {
		ln.Close()
		fh.mu.Lock()
		if fh.c != nil {
			fh.c.Close()
		}
		fh.mu.Unlock()
		l.Close()
	})
	return fh
}

func (fh *v1Holder) accept() {
	for {
		c, err := fh.ln.Accept()
		if err != nil {
			return
		}
		fh.mu.Lock()
		fh.conns++
		fh.c = c
		fh.mu.Unlock()
		go fh.serve(c)
	}
}

func (fh *v1Holder) serve(c net.Conn) {
	defer c.Close()
	var buf []byte
	f, err := wire.ReadFrame(c, &buf)
	if err != nil || f.Type != wire.TypeHello {
		return
	}
	w := wire.NewWriter(c)
	fh.mu.Lock()
	version := fh.version
	fh.mu.Unlock()
	w.JSON(wire.TypeWelcome, wire.Welcome{
		Version: version, Session: "old", Pid: os.Getpid(), End: fh.log.End(), Start: fh.log.End(), Cols: 80, Rows: 24,
	})
	for {
		f, err := wire.ReadFrame(c, &buf)
		if err != nil {
			return
		}
		fh.mu.Lock()
		fh.got = append(fh.got, f.Type)
		ok := v1Accepts[f.Type] || fh.also[f.Type]
		if !ok {
			fh.refused = append(fh.refused, f.Type)
		}
		fh.mu.Unlock()
		if !ok {
			w.Error(wire.CodeMalformed, fmt.Sprintf("unknown frame type 0x%02x", uint8(f.Type)))
			return
		}
		if f.Type == wire.TypeInput {
			fh.input <- append([]byte(nil), f.Payload...)
		}
	}
}

// print logs p and forwards it to the server, as a holder does.
func (fh *v1Holder) print(p []byte) {
	fh.t.Helper()
	off := fh.log.End()
	if _, err := fh.log.Append(p); err != nil {
		fh.t.Fatal(err)
	}
	fh.mu.Lock()
	c := fh.c
	fh.mu.Unlock()
	if err := wire.NewWriter(c).Output(off, p); err != nil {
		fh.t.Fatal(err)
	}
}

// A server connected to a holder of the first release sends it only the
// frames that release knows: the working directory and the name, which
// came later, stay in the registry, and the connection is never dropped
// by the holder's refusal of a frame it does not know.
func TestOldHolderGetsOnlyFramesItKnows(t *testing.T) {
	dir := t.TempDir()
	fh := startV1Holder(t, dir)
	cwds := make(chan string, 4)
	h := New(Config{ID: "old", Dir: dir, OnCwd: func(d string) { cwds <- d }})
	t.Cleanup(h.Close)
	if err := h.Connect(-1); err != nil {
		t.Fatal(err)
	}
	// Output with an OSC 7: the server learns the directory (from the
	// output and from /proc of the pid the holder named).
	fh.print([]byte("\x1b]7;file://host/tmp\x07$ "))
	select {
	case <-cwds:
	case <-time.After(30 * time.Second):
		t.Fatal("the server never learned the working directory")
	}
	if h.SetName("renamed") {
		t.Error("SetName told a holder that does not know the name frame")
	}
	if v := h.Info().HolderProtocol; v != 1 {
		t.Errorf("Info().HolderProtocol = %d, want the holder's 1 (ls shows it)", v)
	}
	if err := h.PrepareShutdown(context.Background(), true); err == nil {
		t.Error("PrepareShutdown told a holder that does not know the shutdown frame")
	}
	// Input is a frame the holder knows, sent after all of the above: once
	// it arrives, whatever the server sent before it has arrived too.
	if err := h.Input([]byte("after\r")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fh.input:
	case <-time.After(30 * time.Second):
		fh.mu.Lock()
		t.Fatalf("the holder never got the input; it got %v", fh.got)
	}
	fh.mu.Lock()
	defer fh.mu.Unlock()
	if len(fh.refused) > 0 || fh.conns != 1 {
		t.Fatalf("the server sent frames a version 1 holder does not know (%v) and connected %d times; it got %v", fh.refused, fh.conns, fh.got)
	}
	if h.Cwd() == "" {
		t.Error("the working directory was not kept")
	}
	if err := h.Input(nil); errors.Is(err, ErrDisconnected) {
		t.Error("the connection dropped")
	}
}
