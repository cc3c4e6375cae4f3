package session

import (
	"bufio"
	"bytes"
	"net"
	"regexp"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/testclock"
	"termkeep/internal/wire"
)

// A writable viewer that falls behind and is skipped past a question with
// a snapshot never sees it, so never answers it: the screen model does,
// once. Before, the question waited for that viewer until it expired, and
// the program asking got no answer at all.
func TestQuestionSkippedByAResyncIsAnswered(t *testing.T) {
	clock := testclock.New(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	rig := newQuestionRigOn(t, ViewerOptions{Queue: 64 << 10}, clock.Now)
	pv := rig.pv
	// A program prints 1 MiB, then asks where the cursor is and waits.
	chunk := bytes.Repeat(append(bytes.Repeat([]byte("x"), 1023), '\n'), 64)
	// The viewer reads a frame every 2 s of the host's clock: far behind
	// the question when it is skipped to the present.
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
				clock.Advance(2 * time.Second)
			}
		}
	}()
	t.Cleanup(func() { close(stop) })

	for range 16 {
		rig.print(chunk)
	}
	rig.print([]byte("\x1b[5;10H\x1b[6n"))
	asked := uint64(len(rig.out))
	// The holder's frames cross a socket: the viewer starts reading only
	// once the host has taken the question in, so a skip cannot stop short
	// of it because the host had not yet heard it.
	rig.waitHostEnd(asked)
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
	cpr := regexp.MustCompile(`\x1b\[\d+;\d+R`)
	var got []byte
	for !cpr.Match(got) {
		p, err := rig.input(10 * time.Second)
		if err != nil {
			t.Fatalf("the holder got no answer to the question: %v", err)
		}
		got = append(got, p...)
	}
	if want := "\x1b[5;10R"; string(got) != want {
		t.Fatalf("the holder got %q, want the model's answer %q once", got, want)
	}
	// And only once.
	if p, err := rig.input(time.Second); err == nil {
		t.Fatalf("the holder got more input after the answer: %q", p)
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatal(err)
	}
}

// A writable viewer that answers the moment it sees a question finds it
// asked: the arbiter learns of a question before any viewer is sent it,
// so the answer reaches the program, every time.
func TestQuestionAnsweredAtOnceIsForwarded(t *testing.T) {
	rig := newQuestionRig(t, ViewerOptions{})
	pv := rig.pv
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
	for i := range rounds {
		rig.print([]byte("\x1b[c"))
		p, err := rig.input(10 * time.Second)
		if err != nil {
			t.Fatalf("question %d: the viewer's answer did not reach the holder: %v", i, err)
		}
		if string(p) != "\x1b[?1;2c" {
			t.Fatalf("question %d: the holder got %q", i, p)
		}
	}
}

// questionRig is a host whose holder the test plays, with one writable
// viewer live at the end.
type questionRig struct {
	*viewerHost
	holderSide net.Conn
	hw         *wire.Writer
	r          *bufio.Reader
	buf        []byte
	pv         *pipeViewer
}

func newQuestionRig(t *testing.T, opts ViewerOptions) *questionRig {
	t.Helper()
	return newQuestionRigOn(t, opts, nil)
}

// newQuestionRigOn is newQuestionRig with the host on the clock now (nil:
// time.Now).
func newQuestionRigOn(t *testing.T, opts ViewerOptions, now func() time.Time) *questionRig {
	t.Helper()
	vh := newViewerHostOn(t, outlog.Options{}, now)
	vh.connected()
	hs := vh.holder(wire.Version)
	pv := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromEnd}, opts)
	if w := pv.welcome(); w.Resume != wire.ResumeLive {
		t.Fatalf("welcome %+v, want live", w)
	}
	return &questionRig{viewerHost: vh, holderSide: hs, hw: wire.NewWriter(hs), r: bufio.NewReader(hs), pv: pv}
}

// print logs p and sends it to the server, as the holder does.
func (q *questionRig) print(p []byte) {
	q.t.Helper()
	off := uint64(len(q.out))
	q.logged(p)
	if err := q.hw.Output(off, p); err != nil {
		q.t.Fatal(err)
	}
}

// waitHostEnd waits until the host has taken in output up to end.
func (q *questionRig) waitHostEnd(end uint64) {
	q.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		_, got, _, changed := q.h.window(end, 0)
		if got >= end {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			q.t.Fatalf("the host took in output to %d, not %d", got, end)
		}
	}
}

// input is the payload of the next Input frame the holder is sent within
// wait.
func (q *questionRig) input(wait time.Duration) ([]byte, error) {
	q.holderSide.SetReadDeadline(time.Now().Add(wait))
	for {
		f, err := wire.ReadFrame(q.r, &q.buf)
		if err != nil {
			return nil, err
		}
		if f.Type == wire.TypeInput {
			return bytes.Clone(f.Payload), nil
		}
	}
}
