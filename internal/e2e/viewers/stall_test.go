package viewers

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/wire"
)

// A server stopped (SIGSTOP) for longer than a viewer may stay silent
// keeps its viewers when it is continued: they answered every ping they
// were sent, and the server's own silence is not theirs. Both kinds stay
// connected and get the output that follows: a WebSocket viewer, which
// answers pings as a browser does, and a CLI viewer (the client package
// `termkeep attach` uses).
func TestStalledServerKeepsViewers(t *testing.T) {
	// The silence limit is 1.5 s; the server is stopped for 4 s.
	t.Setenv("TERMKEEP_PING_INTERVAL", "500ms")
	t.Setenv("TERMKEEP_PONG_TIMEOUT", "1s")
	w := e2e.NewWebEnv(t)
	id := strings.TrimSpace(w.MustTk("new", "--name", "stall", "--", "cat"))

	ws := w.DialViewer("/ws/sessions/" + id + "?from=-1")
	var (
		mu     sync.Mutex
		wsText bytes.Buffer
		wsErr  error
		wsDone = make(chan struct{})
	)
	go func() {
		defer close(wsDone)
		for f := range ws.Frames {
			switch f.Type {
			case wire.TypeServerPing:
				x, _ := wire.ParseUint64(f.Type, f.Payload)
				ws.W.Uint64(wire.TypeAnswer, x)
			case wire.TypeOutput, wire.TypeSnapshot:
				_, data, _ := wire.ParseOutput(f.Payload)
				mu.Lock()
				wsText.Write(data)
				mu.Unlock()
			}
		}
		ws.Mu.Lock()
		wsErr = ws.Err
		ws.Mu.Unlock()
	}()
	cli := e2e.OpenViewer(t, w.Env, id, wire.Hello{From: wire.FromEnd})
	e2e.WaitFor(t, 20*time.Second, "two viewers", func() bool { return w.Session(id).Viewers == 2 })
	// A few pings answered before the stop.
	time.Sleep(time.Second)

	srv := w.Srv.Cmd.Process
	if err := srv.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	continued := false
	defer func() {
		if !continued {
			srv.Signal(syscall.SIGCONT)
		}
	}()
	time.Sleep(4 * time.Second)
	srv.Signal(syscall.SIGCONT)
	continued = true

	// Both still get output on the connections they had.
	w.MustTk("send", id, "after-the-stop")
	cli.Until("the output after the stop", func(f wire.Frame) bool {
		_, data, _ := wire.ParseOutput(f.Payload)
		return f.Type == wire.TypeOutput && bytes.Contains(data, []byte("after-the-stop"))
	})
	e2e.WaitFor(t, 20*time.Second, "the output after the stop at the WebSocket viewer", func() bool {
		select {
		case <-wsDone:
			t.Fatalf("the WebSocket viewer was dropped: %v", wsErr)
		default:
		}
		mu.Lock()
		defer mu.Unlock()
		return bytes.Contains(wsText.Bytes(), []byte("after-the-stop"))
	})
	// Two limits later they are still there: their answers count again.
	time.Sleep(3 * time.Second)
	if n := w.Session(id).Viewers; n != 2 {
		t.Errorf("%d viewers after the stop, want 2", n)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Dir, "server.log")); bytes.Contains(b, []byte("stopped answering")) {
		t.Errorf("the server dropped a viewer as silent:\n%s", e2e.Tail(b, 2000))
	}
}
