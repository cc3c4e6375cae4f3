package session

import (
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/wire"
)

// waitTermMode waits until the host's view of the pty's mode is want (nil:
// unknown).
func waitTermMode(t *testing.T, h *Host, want *wire.TermMode) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := h.Info().TermMode
		if (got == nil) == (want == nil) && (got == nil || *got == *want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Info().TermMode = %+v, want %+v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The host keeps the latest mode its holder reported; a holder of a
// version before the term-mode frame (here, one that replaced it: an older
// build's holder on the same socket) makes it unknown again, not stale.
func TestTermModeFromHolder(t *testing.T) {
	dir := t.TempDir()
	fh := startV1Holder(t, dir)
	fh.mu.Lock()
	fh.version = wire.Version
	fh.mu.Unlock()
	h := New(Config{ID: "old", Dir: dir})
	t.Cleanup(h.Close)
	if err := h.Connect(-1); err != nil {
		t.Fatal(err)
	}
	if m := h.Info().TermMode; m != nil {
		t.Fatalf("a mode %+v before the holder said one", m)
	}
	for _, m := range []wire.TermMode{{At: 0, Echo: true, Canonical: true}, {At: 0, Echo: false, Canonical: true}} {
		fh.mu.Lock()
		c := fh.c
		fh.mu.Unlock()
		if err := wire.NewWriter(c).TermMode(m); err != nil {
			t.Fatal(err)
		}
		waitTermMode(t, h, &m)
	}
	fh.mu.Lock()
	fh.version = 1
	fh.c.Close()
	fh.mu.Unlock()
	waitTermMode(t, h, nil)
	if v := h.Info().HolderProtocol; v != 1 {
		t.Fatalf("HolderProtocol %d after the reconnect, want 1", v)
	}
}

// Viewers of version 7 are told the mode at once and at each change;
// older ones are never sent the frame.
func TestTermModeToViewers(t *testing.T) {
	vh := newViewerHost(t, outlog.Options{})
	vh.connected()
	m := wire.TermMode{At: 0, Echo: true, Canonical: true}
	vh.h.setTermMode(&m)
	now := vh.attach(wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromEnd}, ViewerOptions{})
	old := vh.attach(wire.Hello{Version: 6, Role: wire.RoleViewer, From: wire.FromEnd}, ViewerOptions{})
	now.welcome()
	old.welcome()
	next := func(pv *pipeViewer) wire.TermMode {
		t.Helper()
		for {
			f := pv.next()
			if f.Type == wire.TypeTermMode {
				got, err := wire.ParseTermMode(f.Payload)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
		}
	}
	if got := next(now); got != m {
		t.Fatalf("first mode %+v, want %+v", got, m)
	}
	pw := wire.TermMode{At: 0, Echo: false, Canonical: true}
	vh.h.setTermMode(&pw)
	if got := next(now); got != pw {
		t.Fatalf("mode %+v after the change, want %+v", got, pw)
	}
	vh.live([]byte("mark"))
	for {
		f := old.next()
		if f.Type == wire.TypeTermMode {
			t.Fatal("a version 6 viewer was sent a term-mode frame")
		}
		if f.Type == wire.TypeOutput {
			break
		}
	}
}
