package session

import (
	"bufio"
	"bytes"
	"net"
	"regexp"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/wire"
)

// A writable viewer that falls behind and is skipped past a question with
// a snapshot never sees it, so never answers it: the screen model does,
// once. Before, the question waited for that viewer until it expired, and
// the program asking got no answer at all.
func TestQuestionSkippedByAResyncIsAnswered(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	vh.connected()
	holderSide := vh.holder(wire.Version)

	pv := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromEnd}, ViewerOptions{Queue: 64 << 10})
	if w := pv.welcome(); w.Resume != wire.ResumeLive {
		t.Fatalf("welcome %+v, want live", w)
	}

	// What the holder forwards: output logged, then sent to the server.
	hw := wire.NewWriter(holderSide)
	print := func(p []byte) {
		off := uint64(len(vh.out))
		vh.logged(p)
		if err := hw.Output(off, p); err != nil {
			t.Fatal(err)
		}
	}
	// A program prints 1 MiB, then asks where the cursor is and waits.
	chunk := bytes.Repeat(append(bytes.Repeat([]byte("x"), 1023), '\n'), 64)
	// The viewer reads a frame every 2 s: far behind the question when it
	// is skipped to the present.
	stop := make(chan struct{})
	skipped := make(chan uint64, 1)
	printed := make(chan struct{})
	go func() {
		// Not a byte read until the question is out, however slowly the
		// test prints: the server's write blocks meanwhile, and the
		// viewer is skipped once it reads again.
		<-printed
		for {
			select {
			case <-stop:
				return
			default:
			}
			pv.c.SetReadDeadline(time.Now().Add(30 * time.Second))
			f, err := wire.ReadFrame(pv.c, &pv.buf)
			if err != nil {
				return
			}
			switch f.Type {
			case wire.TypeSnapshot:
				off, _, _ := wire.ParseOutput(f.Payload)
				select {
				case skipped <- off:
				default:
				}
			case wire.TypeOutput:
				if bytes.Contains(f.Payload, []byte("\x1b[6n")) {
					t.Error("the viewer was sent the question: the test skips nothing")
				}
				time.Sleep(2 * time.Second)
			}
		}
	}()
	t.Cleanup(func() { close(stop) })

	for range 16 {
		print(chunk)
	}
	print([]byte("\x1b[5;10H\x1b[6n"))
	asked := uint64(len(vh.out))
	close(printed)

	select {
	case off := <-skipped:
		if off < asked {
			t.Fatalf("the viewer was skipped to %d, before the question at %d", off, asked)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the viewer was not skipped to the present")
	}

	// The holder gets the model's answer: the cursor where the output put
	// it when it asked.
	r := bufio.NewReader(holderSide)
	var buf []byte
	cpr := regexp.MustCompile(`\x1b\[\d+;\d+R`)
	var got []byte
	for !cpr.Match(got) {
		holderSide.SetReadDeadline(time.Now().Add(10 * time.Second))
		f, err := wire.ReadFrame(r, &buf)
		if err != nil {
			t.Fatalf("the holder got no answer to the question: %v", err)
		}
		if f.Type == wire.TypeInput {
			got = append(got, f.Payload...)
		}
	}
	if want := "\x1b[5;10R"; string(got) != want {
		t.Fatalf("the holder got %q, want the model's answer %q once", got, want)
	}
	// And only once.
	holderSide.SetReadDeadline(time.Now().Add(time.Second))
	for {
		f, err := wire.ReadFrame(r, &buf)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if f.Type == wire.TypeInput {
			t.Fatalf("the holder got more input after the answer: %q", f.Payload)
		}
	}
}

// A writable viewer that answers the moment it sees a question finds it
// asked: the arbiter learns of a question before any viewer is sent it,
// so the answer reaches the program, every time.
func TestQuestionAnsweredAtOnceIsForwarded(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	vh.connected()
	holderSide := vh.holder(wire.Version)
	pv := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromEnd}, ViewerOptions{})
	if w := pv.welcome(); w.Resume != wire.ResumeLive {
		t.Fatalf("welcome %+v, want live", w)
	}
	hw := wire.NewWriter(holderSide)
	vw := wire.NewWriter(pv.c)
	const rounds = 200
	go func() {
		for {
			pv.c.SetReadDeadline(time.Now().Add(30 * time.Second))
			f, err := wire.ReadFrame(pv.c, &pv.buf)
			if err != nil {
				return
			}
			if f.Type == wire.TypeOutput && bytes.Contains(f.Payload, []byte("\x1b[c")) {
				vw.Input([]byte("\x1b[?1;2c"))
			}
		}
	}()
	r := bufio.NewReader(holderSide)
	var buf []byte
	for i := range rounds {
		off := uint64(len(vh.out))
		q := []byte("\x1b[c")
		vh.logged(q)
		if err := hw.Output(off, q); err != nil {
			t.Fatal(err)
		}
		for {
			holderSide.SetReadDeadline(time.Now().Add(10 * time.Second))
			f, err := wire.ReadFrame(r, &buf)
			if err != nil {
				t.Fatalf("question %d: the viewer's answer did not reach the holder: %v", i, err)
			}
			if f.Type == wire.TypeInput {
				if string(f.Payload) != "\x1b[?1;2c" {
					t.Fatalf("question %d: the holder got %q", i, f.Payload)
				}
				break
			}
		}
	}
}
