package e2e

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"termkeep/internal/client"
	"termkeep/internal/wire"
)

// Several viewers of one session receive identical bytes in the same order.
func TestViewersReceiveIdenticalBytes(t *testing.T) {
	e := newEnv(t)
	e.startServer()
	const n = 4 * mib
	id := e.newWriter("fan", 5, n, time.Millisecond, true)
	var wg sync.WaitGroup
	got := make([][]byte, 3)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = collect(t, e.c, id, 0, n)
		}()
	}
	wg.Wait()
	want := pattern(5, n)
	for i := range got {
		checkBytes(t, "viewer", got[i], want)
	}
}

// stream is a viewer driven by a test. A goroutine reads it all the time,
// as a real viewer does, so it keeps answering the server's pings.
type stream struct {
	t      *testing.T
	s      *client.Stream
	frames chan frame
}

type frame struct {
	f   wire.Frame
	err error
}

func openViewer(t *testing.T, e *env, ref string, hello wire.Hello) *stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if hello.Role == "" {
		hello.Role = wire.RoleViewer
	}
	s, err := e.c.Attach(ctx, ref, hello)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	v := &stream{t: t, s: s, frames: make(chan frame, 1<<16)}
	go v.read()
	return v
}

// openStalled attaches a viewer that reads nothing until until is called.
func openStalled(t *testing.T, e *env, ref string, hello wire.Hello) *stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hello.Role = wire.RoleViewer
	s, err := e.c.Attach(ctx, ref, hello)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return &stream{t: t, s: s, frames: make(chan frame, 1<<16)}
}

func (v *stream) read() {
	for {
		f, err := v.s.Next()
		if err == nil {
			f.Payload = append([]byte(nil), f.Payload...)
		}
		v.frames <- frame{f, err}
		if err != nil {
			return
		}
	}
}

// until reads frames until fn says stop, within a deadline.
func (v *stream) until(what string, fn func(f wire.Frame) bool) {
	v.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case fr := <-v.frames:
			if fr.err != nil {
				v.t.Fatalf("waiting for %s: %v", what, fr.err)
			}
			if fn(fr.f) {
				return
			}
		case <-deadline:
			v.s.Close()
			v.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// The session's size follows the viewer that last typed or resized; every
// viewer is told who is attached and the size; a read-only viewer can
// neither type nor resize.
func TestSizeFollowsLatestViewer(t *testing.T) {
	e := newEnv(t)
	e.startServer()
	e.mustTk("new", "--name", "sz", "--size", "80x24", "--", "sh")
	a := openViewer(t, e, "sz", wire.Hello{From: wire.FromSnapshot, Cols: 100, Rows: 30})
	waitFor(t, 20*time.Second, "size 100x30", func() bool { s := e.session("sz"); return s.Cols == 100 && s.Rows == 30 })
	b := openViewer(t, e, "sz", wire.Hello{From: wire.FromSnapshot, Cols: 120, Rows: 40})
	waitFor(t, 20*time.Second, "size 120x40", func() bool { s := e.session("sz"); return s.Cols == 120 && s.Rows == 40 })
	// a types: the size goes back to a's.
	a.s.Input([]byte("echo hi\r"))
	waitFor(t, 20*time.Second, "size back to 100x30", func() bool { s := e.session("sz"); return s.Cols == 100 && s.Rows == 30 })
	// b is told: two viewers, a owns the size.
	b.until("a viewers frame naming a as the size owner", func(f wire.Frame) bool {
		if f.Type != wire.TypeViewers {
			return false
		}
		var vs wire.Viewers
		wire.ParseJSON(f.Payload, &vs)
		return len(vs.Viewers) == 2 && vs.Cols == 100 && vs.SizeOwner != vs.You && vs.SizeOwner != 0
	})
	// A read-only viewer's input and resize are refused.
	ro := openViewer(t, e, "sz", wire.Hello{From: wire.FromSnapshot, Cols: 50, Rows: 10, ReadOnly: true})
	ro.s.Input([]byte("echo SHOULD-NOT-RUN\r"))
	ro.until("an error frame", func(f wire.Frame) bool { return f.Type == wire.TypeError })
	ro.s.Resize(50, 10)
	time.Sleep(300 * time.Millisecond)
	if s := e.session("sz"); s.Cols != 100 || s.Rows != 30 {
		t.Fatalf("read-only viewer changed the size to %dx%d", s.Cols, s.Rows)
	}
	if out := e.mustTk("capture", "--raw", "sz"); strings.Contains(out, "SHOULD-NOT-RUN") {
		t.Fatal("read-only viewer's input reached the session")
	}
}

// A viewer that stops answering pings is dropped within the ping interval
// plus the pong timeout; one that answers stays.
func TestSilentViewerIsDropped(t *testing.T) {
	e := newEnv(t)
	e.serverArgs = []string{"--ping-interval", "300ms", "--pong-timeout", "300ms"}
	e.startServer()
	e.mustTk("new", "--name", "p", "--", "cat")
	// A raw connection that says hello and then never reads nor answers.
	c, err := dialUnix(e.dir + "/server.sock")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id := e.session("p").ID
	c.Write([]byte("GET /v1/sessions/" + id + "/attach HTTP/1.1\r\nHost: termkeep\r\nConnection: Upgrade\r\nUpgrade: termkeep-wire\r\n\r\n"))
	wire.NewWriter(c).JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromEnd})
	// A well-behaved viewer (the client answers pings by itself).
	good := openViewer(t, e, "p", wire.Hello{From: wire.FromEnd})
	start := time.Now()
	good.until("a viewers frame with one viewer", func(f wire.Frame) bool {
		if f.Type != wire.TypeViewers {
			return false
		}
		var vs wire.Viewers
		wire.ParseJSON(f.Payload, &vs)
		return len(vs.Viewers) == 1
	})
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the silent viewer was dropped after %s", d)
	}
	// The good one is still served a second later.
	time.Sleep(time.Second)
	e.mustTk("send", "p", "still-served")
	good.until("its output", func(f wire.Frame) bool {
		_, data, _ := wire.ParseOutput(f.Payload)
		return f.Type == wire.TypeOutput && bytes.Contains(data, []byte("still-served"))
	})
}

// A viewer that stops reading never slows the child or another viewer; when
// it reads again it is skipped to the present with a snapshot.
func TestStalledViewerIsResynced(t *testing.T) {
	e := newEnv(t)
	e.serverArgs = []string{"--viewer-queue", "64KiB"}
	e.startServer()
	const n = 16 * mib
	id := e.newWriter("stall", 6, n, 0, true, "--env", "TK_GO=1")
	// The stalled viewer: attached before the output starts, then never
	// reads for a while.
	stalled := openStalled(t, e, id, wire.Hello{From: wire.FromEnd})
	e.mustTk("send", "--no-enter", id, "g")
	// The other viewer gets everything, at full speed.
	got := collect(t, e.c, id, 0, n)
	checkBytes(t, "the reading viewer", got, pattern(6, n))
	// The stalled one stays stalled a while longer (its pending write is
	// blocked all along), then reads: it gets a snapshot and then the present.
	time.Sleep(time.Second)
	go stalled.read()
	snap := false
	seen := map[wire.Type]int{}
	defer func() { t.Logf("the stalled viewer received %v", seen) }()
	stalled.until("a snapshot", func(f wire.Frame) bool {
		seen[f.Type]++
		if f.Type == wire.TypeSnapshot {
			snap = true
		}
		return snap
	})
	e.mustTk("send", "--no-enter", id, "q")
	if _, errs, code := e.tk("wait", id, "--exit", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %d %s", code, errs)
	}
}

// answerQueries makes a test viewer behave like a terminal: it answers
// every cursor-position and device-attributes question in the output.
func answerQueries(v *stream) {
	go func() {
		for fr := range v.frames {
			if fr.err != nil {
				return
			}
			if fr.f.Type != wire.TypeOutput && fr.f.Type != wire.TypeSnapshot {
				continue
			}
			_, data, _ := wire.ParseOutput(fr.f.Payload)
			for range bytes.Count(data, []byte("\x1b[6n")) {
				v.s.Input([]byte("\x1b[5;5R"))
			}
			for range bytes.Count(data, []byte("\x1b[c")) {
				v.s.Input([]byte("\x1b[?1;2c"))
			}
		}
	}()
}

// A program that asks questions with three viewers attached receives
// exactly one answer to each; a viewer replaying the log later types
// nothing into it.
func TestEachQueryGetsOneAnswer(t *testing.T) {
	e := newEnv(t)
	e.startServer()
	id := strings.TrimSpace(e.mustTk("new", "--env", "TK_CHILD=query", "--", selfBin))
	for range 3 {
		answerQueries(openViewer(t, e, id, wire.Hello{From: wire.FromSnapshot}))
	}
	e.mustTk("send", "--no-enter", id, "g")
	if _, errs, code := e.tk("wait", id, "--output", "GOT1:", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	// A viewer that replays the whole log sees the questions again.
	answerQueries(openViewer(t, e, id, wire.Hello{From: 0}))
	if _, errs, code := e.tk("wait", id, "--exit", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	out := e.mustTk("capture", "--raw", id)
	want1 := `GOT1:"\x1b[5;5R\x1b[?1;2c":END`
	if !strings.Contains(out, want1) {
		t.Fatalf("the program received other answers than one of each, in order:\n%q\nwant %q", out, want1)
	}
	if !strings.Contains(out, `GOT2:"":END`) {
		t.Fatalf("a replaying viewer typed into the program:\n%q", out)
	}
}

// Under the smallest policy, chosen per session, the session fits every
// writable viewer.
func TestSizeSmallestPolicy(t *testing.T) {
	e := newEnv(t)
	e.startServer()
	e.mustTk("new", "--name", "small", "--size-policy", "smallest", "--", "cat")
	openViewer(t, e, "small", wire.Hello{From: wire.FromEnd, Cols: 100, Rows: 30})
	openViewer(t, e, "small", wire.Hello{From: wire.FromEnd, Cols: 90, Rows: 40})
	openViewer(t, e, "small", wire.Hello{From: wire.FromEnd, Cols: 20, Rows: 5, ReadOnly: true})
	waitFor(t, 20*time.Second, "size 90x30", func() bool { s := e.session("small"); return s.Cols == 90 && s.Rows == 30 })
	if s := e.session("small"); s.Viewers != 3 || s.SizePolicy != "smallest" {
		t.Fatalf("session shows %d viewers, policy %q", s.Viewers, s.SizePolicy)
	}
	if _, errs, code := e.tk("new", "--size-policy", "biggest", "--", "cat"); code != 1 || !strings.Contains(errs, "size policy") {
		t.Fatalf("bad policy accepted: %d %s", code, errs)
	}
}
