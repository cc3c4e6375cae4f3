package session

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/screen"
	"termkeep/internal/wire"
)

func TestSnapshotLines(t *testing.T) {
	for _, c := range []struct {
		name        string
		hello       wire.Hello
		first, then int
	}{
		{"history with the screen", wire.Hello{Scrollback: 1000}, 1000, 0},
		{"screen first, history after", wire.Hello{Scrollback: 1000, ScreenFirst: true}, 0, 1000},
		{"screen first, no history", wire.Hello{ScreenFirst: true}, 0, 0},
		{"no history", wire.Hello{}, 0, 0},
		{"negative history", wire.Hello{Scrollback: -5}, 0, 0},
		{"negative history, screen first", wire.Hello{Scrollback: -5, ScreenFirst: true}, 0, 0},
	} {
		first, then := snapshotLines(c.hello)
		if first != c.first || then != c.then {
			t.Errorf("%s: %d then %d lines, want %d then %d", c.name, first, then, c.first, c.then)
		}
	}
}

// A viewer that asks for its screen first gets a snapshot of the screen
// alone, then, at the same offset, one that keeps the terminal's history
// and draws the lines asked for above the screen again; the output then
// goes on from that offset, each byte once.
func TestServeViewerScreenFirst(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	var hist bytes.Buffer
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&hist, "line-%d\r\n", i)
	}
	vh.logged(hist.Bytes())
	vh.connected()
	pv := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromSnapshot, Scrollback: 50, ScreenFirst: true}, ViewerOptions{})
	w := pv.welcome()
	if w.Resume != wire.ResumeSnapshot || w.Start != uint64(len(vh.out)) {
		t.Fatalf("welcome %+v, want a snapshot at %d", w, len(vh.out))
	}
	snapshot := func() (uint64, []byte) {
		t.Helper()
		for {
			f := pv.next()
			switch f.Type {
			case wire.TypeSnapshot:
				off, data, _ := wire.ParseOutput(f.Payload)
				return off, bytes.Clone(data)
			case wire.TypeViewers, wire.TypeServerPing:
			default:
				t.Fatalf("a %s frame, want a snapshot", f.Type)
			}
		}
	}
	off1, first := snapshot()
	off2, keep := snapshot()
	if off1 != w.Start || off2 != off1 {
		t.Fatalf("snapshots at %d and %d, want both at %d", off1, off2, w.Start)
	}
	if !bytes.HasPrefix(first, []byte("\x1bc")) || bytes.Contains(first, []byte("line-170\r")) {
		t.Errorf("the first snapshot is not the screen alone: %q", first)
	}
	if bytes.HasPrefix(keep, []byte("\x1bc")) || !bytes.Contains(keep, []byte("line-150\r")) || bytes.Contains(keep, []byte("line-120\r")) {
		t.Errorf("the second snapshot does not keep the history and add the last 50 lines: %q", keep)
	}
	term := screen.New(80, 24, screen.Options{})
	term.Write(first)
	term.Write(keep)
	ref := screen.New(80, 24, screen.Options{})
	ref.Write(hist.Bytes())
	if got, want := term.Text(50), ref.Text(50); got != want {
		t.Errorf("the terminal shows\n%s\nwant\n%s", got, want)
	}

	vh.live([]byte("after\r\n"))
	for {
		f := pv.next()
		if f.Type != wire.TypeOutput {
			continue
		}
		off, data, _ := wire.ParseOutput(f.Payload)
		if off != off2 || string(data) != "after\r\n" {
			t.Fatalf("output %q at %d, want \"after\\r\\n\" at %d", data, off, off2)
		}
		return
	}
}

// The server's bookkeeping for a new viewer (opts.Started: the event
// and the log line) waits until the viewer has its welcome and screen,
// and is done before anything from the viewer is applied.
func TestServeViewerStartedAfterTheScreen(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	vh.logged([]byte("history\r\nscreen\r\n"))
	vh.connected()
	started, release := make(chan struct{}), make(chan struct{})
	calls := 0
	pv := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromSnapshot, Scrollback: 10, ScreenFirst: true},
		ViewerOptions{Started: func() { calls++; close(started); <-release }})
	pv.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var got []wire.Type
	for len(got) < 3 {
		f, err := wire.ReadFrame(pv.c, &pv.buf)
		if err != nil {
			t.Fatalf("after %v: %v (the screen waited for Started?)", got, err)
		}
		if f.Type != wire.TypeViewers && f.Type != wire.TypeServerPing {
			got = append(got, f.Type)
		}
	}
	if got[0] != wire.TypeWelcome || got[1] != wire.TypeSnapshot || got[2] != wire.TypeSnapshot {
		t.Fatalf("frames %v before Started, want a welcome and two snapshots", got)
	}
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("Started was not called after the screen was sent")
	}
	close(release)
	if calls != 1 {
		t.Errorf("Started called %d times, want once", calls)
	}
}
