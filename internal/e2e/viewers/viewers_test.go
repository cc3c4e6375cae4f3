package viewers

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/wire"
)

// Several viewers of one session receive identical bytes in the same order.
func TestViewersReceiveIdenticalBytes(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	const n = 4 * e2e.MiB
	id := e.NewWriter("fan", 5, n, time.Millisecond, true)
	var wg sync.WaitGroup
	got := make([][]byte, 3)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = e2e.Collect(t, e.C, id, 0, n)
		}()
	}
	wg.Wait()
	want := e2e.Pattern(5, n)
	for i := range got {
		e2e.CheckBytes(t, "viewer", got[i], want)
	}
}

// openStalled attaches a viewer that reads nothing until until is called.
func openStalled(t *testing.T, e *e2e.Env, ref string, hello wire.Hello) *e2e.Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hello.Role = wire.RoleViewer
	s, err := e.C.Attach(ctx, ref, hello)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return &e2e.Stream{T: t, S: s, Frames: make(chan e2e.Frame, 1<<16)}
}

// The session's size follows the viewer that last typed or fit; a mere
// report of a viewer's size takes nothing; every viewer is told who is
// attached and the size; a read-only viewer can neither type nor resize.
func TestSizeFollowsLatestViewer(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "sz", "--size", "80x24", "--", "sh")
	a := e2e.OpenViewer(t, e, "sz", wire.Hello{From: wire.FromSnapshot, Cols: 100, Rows: 30, Fit: true})
	e2e.WaitFor(t, 20*time.Second, "size 100x30", func() bool { s := e.Session("sz"); return s.Cols == 100 && s.Rows == 30 })
	b := e2e.OpenViewer(t, e, "sz", wire.Hello{From: wire.FromSnapshot, Cols: 70, Rows: 20})
	b.S.Resize(71, 21) // a phone rotating: reported, not taken
	b.S.Fit(120, 40)
	e2e.WaitFor(t, 20*time.Second, "size 120x40", func() bool { s := e.Session("sz"); return s.Cols == 120 && s.Rows == 40 })
	// a types: the size goes back to a's.
	a.S.Input([]byte("echo hi\r"))
	e2e.WaitFor(t, 20*time.Second, "size back to 100x30", func() bool { s := e.Session("sz"); return s.Cols == 100 && s.Rows == 30 })
	// b is told: two viewers, a owns the size.
	b.Until("a viewers frame naming a as the size owner", func(f wire.Frame) bool {
		if f.Type != wire.TypeViewers {
			return false
		}
		var vs wire.Viewers
		wire.ParseJSON(f.Payload, &vs)
		return len(vs.Viewers) == 2 && vs.Cols == 100 && vs.SizeOwner != vs.You && vs.SizeOwner != 0
	})
	// A read-only viewer's input and resize are refused.
	ro := e2e.OpenViewer(t, e, "sz", wire.Hello{From: wire.FromSnapshot, Cols: 50, Rows: 10, ReadOnly: true})
	ro.S.Input([]byte("echo SHOULD-NOT-RUN\r"))
	ro.Until("an error frame", func(f wire.Frame) bool { return f.Type == wire.TypeError })
	ro.S.Resize(50, 10)
	ro.S.Fit(50, 10)
	time.Sleep(300 * time.Millisecond)
	if s := e.Session("sz"); s.Cols != 100 || s.Rows != 30 {
		t.Fatalf("read-only viewer changed the size to %dx%d", s.Cols, s.Rows)
	}
	if out := e.MustTk("capture", "--raw", "sz"); strings.Contains(out, "SHOULD-NOT-RUN") {
		t.Fatal("read-only viewer's input reached the session")
	}
}

// A viewer that stops answering pings is dropped within the ping interval
// plus the pong timeout; one that answers stays.
func TestSilentViewerIsDropped(t *testing.T) {
	e := e2e.NewEnv(t)
	e.ServerArgs = []string{"--ping-interval", "300ms", "--pong-timeout", "300ms"}
	e.StartServer()
	e.MustTk("new", "--name", "p", "--", "cat")
	// A raw connection that says hello and then never reads nor answers.
	c, err := e2e.DialUnix(e.Dir + "/server.sock")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id := e.Session("p").ID
	c.Write([]byte("GET /v1/sessions/" + id + "/attach HTTP/1.1\r\nHost: termkeep\r\nConnection: Upgrade\r\nUpgrade: termkeep-wire\r\n\r\n"))
	wire.NewWriter(c).JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromEnd})
	// A well-behaved viewer (the client answers pings by itself).
	good := e2e.OpenViewer(t, e, "p", wire.Hello{From: wire.FromEnd})
	start := time.Now()
	good.Until("a viewers frame with one viewer", func(f wire.Frame) bool {
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
	e.MustTk("send", "p", "still-served")
	good.Until("its output", func(f wire.Frame) bool {
		_, data, _ := wire.ParseOutput(f.Payload)
		return f.Type == wire.TypeOutput && bytes.Contains(data, []byte("still-served"))
	})
}

// A viewer that stops reading never slows the child or another viewer; when
// it reads again it is skipped to the present with a snapshot.
func TestStalledViewerIsResynced(t *testing.T) {
	e := e2e.NewEnv(t)
	e.ServerArgs = []string{"--viewer-queue", "64KiB"}
	e.StartServer()
	// Far more than the queue and the sockets' buffers, and little
	// enough for a -race server's screen model on a busy machine to
	// reach the end (the snapshot waits for it) well within the wait.
	const n = 4 * e2e.MiB
	id := e.NewWriter("stall", 6, n, 0, true, "--env", "TK_GO=1")
	// The stalled viewer: attached before the output starts, then never
	// reads for a while.
	stalled := openStalled(t, e, id, wire.Hello{From: wire.FromEnd})
	e.MustTk("send", "--no-enter", id, "g")
	// The other viewer gets everything, at full speed.
	got := e2e.Collect(t, e.C, id, 0, n)
	e2e.CheckBytes(t, "the reading viewer", got, e2e.Pattern(6, n))
	// The stalled one stays stalled a while longer (its pending write is
	// blocked all along), then reads: it gets a snapshot and then the present.
	time.Sleep(time.Second)
	go stalled.Read()
	snap := false
	seen := map[wire.Type]int{}
	defer func() { t.Logf("the stalled viewer received %v", seen) }()
	stalled.Until("a snapshot", func(f wire.Frame) bool {
		seen[f.Type]++
		if f.Type == wire.TypeSnapshot {
			snap = true
		}
		return snap
	})
	e.MustTk("send", "--no-enter", id, "q")
	if _, errs, code := e.Tk("wait", id, "--exit", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %d %s", code, errs)
	}
}

// answerQueries makes a test viewer behave like a terminal: it answers
// every cursor-position and device-attributes question in the output.
func answerQueries(v *e2e.Stream) {
	go func() {
		for fr := range v.Frames {
			if fr.Err != nil {
				return
			}
			if fr.F.Type != wire.TypeOutput && fr.F.Type != wire.TypeSnapshot {
				continue
			}
			_, data, _ := wire.ParseOutput(fr.F.Payload)
			for range bytes.Count(data, []byte("\x1b[6n")) {
				v.S.Input([]byte("\x1b[5;5R"))
			}
			for range bytes.Count(data, []byte("\x1b[c")) {
				v.S.Input([]byte("\x1b[?1;2c"))
			}
		}
	}()
}

// A program that asks questions with three viewers attached receives
// exactly one answer to each; a viewer replaying the log later types
// nothing into it.
func TestEachQueryGetsOneAnswer(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--env", "TK_CHILD=query", "--", e2e.SelfBin))
	e.WaitRaw(id) // the go must not be echoed
	for range 3 {
		answerQueries(e2e.OpenViewer(t, e, id, wire.Hello{From: wire.FromSnapshot}))
	}
	e.MustTk("send", "--no-enter", id, "g")
	if _, errs, code := e.Tk("wait", id, "--from", "start", "--output", "GOT1:", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	// A viewer that replays the whole log sees the questions again.
	answerQueries(e2e.OpenViewer(t, e, id, wire.Hello{From: 0}))
	if _, errs, code := e.Tk("wait", id, "--exit", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	out := e.MustTk("capture", "--raw", id)
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
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "small", "--size-policy", "smallest", "--", "cat")
	e2e.OpenViewer(t, e, "small", wire.Hello{From: wire.FromEnd, Cols: 100, Rows: 30})
	e2e.OpenViewer(t, e, "small", wire.Hello{From: wire.FromEnd, Cols: 90, Rows: 40})
	e2e.OpenViewer(t, e, "small", wire.Hello{From: wire.FromEnd, Cols: 20, Rows: 5, ReadOnly: true})
	e2e.WaitFor(t, 20*time.Second, "size 90x30", func() bool { s := e.Session("small"); return s.Cols == 90 && s.Rows == 30 })
	if s := e.Session("small"); s.Viewers != 3 || s.SizePolicy != "smallest" {
		t.Fatalf("session shows %d viewers, policy %q", s.Viewers, s.SizePolicy)
	}
	if _, errs, code := e.Tk("new", "--size-policy", "biggest", "--", "cat"); code != 1 || !strings.Contains(errs, "size policy") {
		t.Fatalf("bad policy accepted: %d %s", code, errs)
	}
}

// termkeep resize keeps a session at a size whatever its viewers do (the
// policy becomes fixed), and --policy switches back while it runs; a size
// that is not one, or a size with another policy, is a usage error.
func TestResizeFixesTheSize(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "fx", "--size", "80x24", "--", "cat")
	v := e2e.OpenViewer(t, e, "fx", wire.Hello{From: wire.FromEnd, Cols: 100, Rows: 30, Fit: true})
	e2e.WaitFor(t, 20*time.Second, "size 100x30", func() bool { s := e.Session("fx"); return s.Cols == 100 && s.Rows == 30 })
	if out := e.MustTk("resize", "fx", "90x25"); strings.TrimSpace(out) != "90x25 fixed" {
		t.Fatalf("resize printed %q", out)
	}
	v.S.Fit(120, 40)
	v.S.Input([]byte("x"))
	time.Sleep(300 * time.Millisecond)
	if s := e.Session("fx"); s.Cols != 90 || s.Rows != 25 || s.SizePolicy != "fixed" {
		t.Fatalf("under fixed a viewer changed the size to %dx%d (%s)", s.Cols, s.Rows, s.SizePolicy)
	}
	e.MustTk("resize", "fx", "--policy", "latest")
	v.S.Fit(120, 40)
	e2e.WaitFor(t, 20*time.Second, "size 120x40 under latest again", func() bool { s := e.Session("fx"); return s.Cols == 120 && s.Rows == 40 })
	for _, args := range [][]string{{"resize", "fx"}, {"resize", "fx", "0x5"}, {"resize", "fx", "90x25", "--policy", "latest"}, {"resize", "fx", "--policy", "biggest"}} {
		if _, errs, code := e.Tk(args...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, errs)
		}
	}
}
