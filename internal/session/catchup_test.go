package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/replay"
	"termkeep/internal/wire"
)

// endedLog writes p as a holder would into a new session directory's log,
// and closes it: the session has ended.
func endedLog(t *testing.T, p []byte) (dir string, end uint64) {
	t.Helper()
	dir = t.TempDir()
	l, err := outlog.Open(filepath.Join(dir, "log"), outlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(p); err != nil {
		t.Fatal(err)
	}
	end = l.End()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, end
}

// endedHost is the host a starting server makes for a session that has
// ended: no holder, the end from the registry or meta.json.
func endedHost(t *testing.T, dir string, e wire.Exit) *Host {
	h := New(Config{ID: "e", Dir: dir})
	t.Cleanup(func() { closeAndWait(h) })
	h.MarkEnded(e)
	return h
}

// closeAndWait closes the host and waits for its model's feeder, which
// may still be writing a checkpoint into the directory the test removes
// next (Close does not wait for it).
func closeAndWait(h *Host) {
	h.Close()
	h.mu.Lock()
	m := h.model
	h.mu.Unlock()
	if m != nil {
		<-m.done
	}
}

// screenWithin is the host's screen as text, failing the test unless it
// comes within d (much less than what a busy machine can take, and much
// more than the few milliseconds it does).
func screenWithin(t *testing.T, h *Host, d time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	text, err := h.Screen(ctx, false, 0)
	if err != nil {
		t.Fatalf("the screen, after %s: %v", time.Since(start).Round(time.Millisecond), err)
	}
	return text
}

// The first request for the screen of a session that ended under an
// earlier server (its checkpoint at the end of its log) is answered at
// once, from the checkpoint.
func TestEndedScreenFromCheckpoint(t *testing.T) {
	dir, end := endedLog(t, []byte("first line\r\nlast line\r\n"))
	h1 := endedHost(t, dir, wire.Exit{State: "exited"})
	if text := screenWithin(t, h1, 20*time.Second); !strings.Contains(text, "last line") {
		t.Fatalf("the first server's screen:\n%s", text)
	}
	closeAndWait(h1)
	if off, err := replay.CheckpointOffset(filepath.Join(dir, CheckpointFile)); err != nil || off != end {
		t.Fatalf("the checkpoint the first server left: at %d, %v; want at the end, %d", off, err, end)
	}

	h2 := endedHost(t, dir, wire.Exit{State: "exited"}) // the server restarted
	if h2.NeedsCatchUp() {
		t.Error("a starting server would catch up a model whose checkpoint is at the end")
	}
	if text := screenWithin(t, h2, 5*time.Second); !strings.Contains(text, "first line") || !strings.Contains(text, "last line") {
		t.Fatalf("the restarted server's screen:\n%s", text)
	}
}

// A session whose holder could not log its last bytes before it exited
// (meta.json's end is past the log's): the screen is what the log has, at
// once, instead of a wait for bytes that never come.
func TestEndedScreenLostTail(t *testing.T) {
	dir, end := endedLog(t, []byte("logged\r\n"))
	h := endedHost(t, dir, wire.Exit{State: "exited", End: end + 100})
	if text := screenWithin(t, h, 5*time.Second); !strings.Contains(text, "logged") {
		t.Fatalf("the screen:\n%s", text)
	}
}

// A session that ended while no server ran, with more log than a request
// should replay: CatchUp brings its checkpoint to the end and lets the
// model go; the next request reads the checkpoint alone.
func TestCatchUpEnded(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() <= 3<<20; i++ {
		fmt.Fprintf(&b, "line %d of a long build\r\n", i)
	}
	b.WriteString("the end\r\n")
	dir, end := endedLog(t, []byte(b.String()))
	h := endedHost(t, dir, wire.Exit{State: "exited"})
	if !h.NeedsCatchUp() {
		t.Fatal("a starting server would not catch up a 3 MiB log with no checkpoint")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h.CatchUp(ctx)
	if off, err := replay.CheckpointOffset(filepath.Join(dir, CheckpointFile)); err != nil || off != end {
		t.Fatalf("after CatchUp the checkpoint is at %d, %v; want at the end, %d", off, err, end)
	}
	h.mu.Lock()
	kept := h.model != nil
	h.mu.Unlock()
	if kept {
		t.Error("CatchUp kept the model of an ended session in memory")
	}
	if h.NeedsCatchUp() {
		t.Error("NeedsCatchUp after CatchUp")
	}
	if text := screenWithin(t, h, 5*time.Second); !strings.Contains(text, "the end") {
		t.Fatalf("the screen after CatchUp:\n%s", text)
	}
}

// A request for the screen waits for a model that is behind for as long
// as its context lets it, and then says how far the model got; closing
// the host ends the wait too.
func TestScreenWaitsForItsContext(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	vh.live([]byte("up to here\r\n"))
	if text := screenWithin(t, vh.h, 20*time.Second); !strings.Contains(text, "up to here") {
		t.Fatalf("the screen:\n%s", text)
	}
	// The server has heard of bytes the log does not have yet (a holder
	// whose log is a refresh behind): the model waits for them.
	vh.h.mu.Lock()
	vh.h.end += 10
	vh.h.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := vh.h.Screen(ctx, false, 0); err == nil || !strings.Contains(err.Error(), "reached byte") {
		t.Fatalf("a request whose context ended: %v; want how far the model got", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := vh.h.Screen(context.Background(), false, 0)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	vh.h.Close()
	select {
	case err := <-done:
		if err != ErrStopping {
			t.Fatalf("a request when the host closed: %v, want ErrStopping", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a request waiting for the model did not end when the host closed")
	}
}

// A viewer reading an ended session whose last bytes its holder never
// logged gets what the log has, a gap for the rest, and the exit, instead
// of waiting for bytes that never come.
func TestViewerOfEndedSessionLostTail(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	vh.logged([]byte("logged bytes\r\n"))
	logEnd := uint64(len(vh.out))
	vh.h.MarkEnded(wire.Exit{State: "exited", End: logEnd + 50})
	pv := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: 0}, ViewerOptions{})
	if w := pv.welcome(); w.End != logEnd+50 {
		t.Fatalf("welcome %+v, want the end at %d", w, logEnd+50)
	}
	var got []byte
	gap := false
	for {
		f := pv.next()
		switch f.Type {
		case wire.TypeOutput:
			_, data, _ := wire.ParseOutput(f.Payload)
			got = append(got, data...)
		case wire.TypeGap:
			from, to, _ := wire.ParseGap(f.Payload)
			if from != logEnd || to != logEnd+50 {
				t.Fatalf("gap [%d, %d), want [%d, %d)", from, to, logEnd, logEnd+50)
			}
			gap = true
		case wire.TypeExit:
			if string(got) != "logged bytes\r\n" || !gap {
				t.Fatalf("before the exit: %q and a gap %v; want the logged bytes and the gap", got, gap)
			}
			return
		}
	}
}
