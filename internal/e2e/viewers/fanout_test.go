package viewers

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/e2e"
	"termkeep/internal/wire"
)

// Eight WebSocket viewers of one session each receive its output in order,
// every Output frame starting exactly where the previous one (or the last
// snapshot, should the server skip a slow viewer to the present) left off,
// and every one of them reaches the end, while a ninth WebSocket viewer,
// attached before the output starts, never reads a byte. What `make bench`
// times as fan-out, checked for correctness.
func TestWebFanOutWithStalledViewer(t *testing.T) {
	w := e2e.NewWebEnv(t)
	const n = 2 * e2e.MiB
	const viewers = 8
	id := w.NewWriter("fan", 11, n, 0, true, "--env", "TK_GO=1")

	vs := make([]*e2e.WSViewer, viewers)
	for i := range vs {
		vs[i] = w.DialViewer("/ws/sessions/" + id + "?from=0")
		// Output frames are up to 256 KiB; the library reads 32 KiB by
		// default. Nothing that large comes before the go keystroke.
		vs[i].C.SetReadLimit(2*wire.MaxPayload + 2*wire.HeaderSize)
		vs[i].Until("welcome", e2e.IsType(wire.TypeWelcome))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stalled, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(w.Base, "http")+"/ws/sessions/"+id+"?from=-1",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + w.Token}}})
	if err != nil {
		t.Fatalf("dial the stalled viewer: %v", err)
	}
	defer stalled.CloseNow()
	e2e.WaitFor(t, 10*time.Second, "nine viewers attached", func() bool {
		kinds, _ := w.SessionEvents(id)
		return strings.Count(strings.Join(kinds, " "), "viewer.attached") == viewers+1
	})

	if err := vs[0].W.Input([]byte("g")); err != nil {
		t.Fatal(err)
	}
	want := e2e.Pattern(11, n)
	for i, v := range vs {
		var got []byte
		next, resynced := uint64(0), false
		v.Until("the whole output", func(f wire.Frame) bool {
			switch f.Type {
			case wire.TypeSnapshot:
				off, _, _ := wire.ParseOutput(f.Payload)
				next, resynced = off, true
			case wire.TypeOutput:
				off, data, _ := wire.ParseOutput(f.Payload)
				if off != next {
					t.Fatalf("viewer %d: output at offset %d, want %d", i+1, off, next)
				}
				next += uint64(len(data))
				if !resynced {
					got = append(got, data...)
				}
			case wire.TypeGap:
				t.Fatalf("viewer %d: a gap frame in a session that retains everything", i+1)
			}
			return next >= n
		})
		if resynced {
			t.Logf("viewer %d was skipped to the present with a snapshot", i+1)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("viewer %d: %d bytes that differ from the %d the child wrote", i+1, len(got), n)
		}
	}

	// The child was never held up: it ends as soon as it is told to.
	if err := vs[0].W.Input([]byte("q")); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := w.Tk("wait", id, "--exit", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %d %s", code, errs)
	}
}

// Two WebSocket viewers and one CLI viewer of one session receive identical
// bytes in the same order.
func TestWebAndCLIViewersIdentical(t *testing.T) {
	w := e2e.NewWebEnv(t)
	const n = 2 * e2e.MiB
	id := w.NewWriter("mix", 12, n, time.Millisecond, true, "--env", "TK_GO=1")
	var ws [2]*e2e.WSViewer
	for i := range ws {
		ws[i] = w.DialViewer("/ws/sessions/" + id + "?from=0")
		ws[i].C.SetReadLimit(2*wire.MaxPayload + 2*wire.HeaderSize)
		ws[i].Until("welcome", e2e.IsType(wire.TypeWelcome))
	}
	// The CLI viewer reads in a goroutine, which must not fail the test.
	type collected struct {
		b   []byte
		err error
	}
	cli := make(chan collected, 1)
	go func() {
		b, err := e2e.CollectErr(w.C, id, 0, n)
		cli <- collected{b, err}
	}()
	if err := ws[0].W.Input([]byte("g")); err != nil {
		t.Fatal(err)
	}
	want := e2e.Pattern(12, n)
	for i, v := range ws {
		var got []byte
		v.Until("the whole output", func(f wire.Frame) bool {
			if f.Type == wire.TypeOutput {
				off, data, _ := wire.ParseOutput(f.Payload)
				if off != uint64(len(got)) {
					t.Fatalf("WebSocket viewer %d: output at %d, want %d", i+1, off, len(got))
				}
				got = append(got, data...)
			}
			if f.Type == wire.TypeSnapshot || f.Type == wire.TypeGap {
				t.Fatalf("WebSocket viewer %d replaying from 0 got a %s frame", i+1, f.Type)
			}
			return len(got) >= n
		})
		e2e.CheckBytes(t, "WebSocket viewer", got, want)
	}
	c := <-cli
	if c.err != nil {
		t.Fatalf("CLI viewer: %v", c.err)
	}
	e2e.CheckBytes(t, "CLI viewer", c.b, want)
}
