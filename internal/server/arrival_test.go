package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// A viewer's arrival is recorded when ServeViewer calls started (once it
// has its screen), not before; one that went before that is recorded as
// arriving, then leaving, all the same; a waiter never is.
func TestViewerArrival(t *testing.T) {
	ts := newTestServer(t, "", store.Session{ID: "a1", Name: "one", State: store.StateExited})
	kinds := func() []string {
		t.Helper()
		ts.srv.events.flush() // what the batch writer has queued
		evs, err := ts.srv.store.Events(context.Background(), 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var k []string
		for _, e := range evs {
			if e.Session == "a1" {
				k = append(k, e.Kind)
			}
		}
		return k
	}
	same := func(got []string, want ...string) bool { return slices.Equal(got, want) }
	viewer := wire.Hello{Role: wire.RoleViewer}

	started, detached := ts.srv.viewerArrival(store.Session{ID: "a1", Name: "one"}, viewer, "cli", false, "")
	if k := kinds(); len(k) != 0 {
		t.Fatalf("before started: %v, want nothing", k)
	}
	started()
	if k := kinds(); !same(k, store.EventViewerAttached) {
		t.Fatalf("after started: %v", k)
	}
	detached()
	if k := kinds(); !same(k, store.EventViewerAttached, store.EventViewerDetached) {
		t.Fatalf("after detached: %v", k)
	}

	// Gone before its first frames: both, in order, at the end.
	_, detached = ts.srv.viewerArrival(store.Session{ID: "a1", Name: "one"}, viewer, "web", true, "127.0.0.1:9")
	detached()
	if k := kinds(); !same(k, store.EventViewerAttached, store.EventViewerDetached, store.EventViewerAttached, store.EventViewerDetached) {
		t.Fatalf("a viewer gone before its screen: %v", k)
	}

	started, detached = ts.srv.viewerArrival(store.Session{ID: "a1", Name: "one"}, wire.Hello{Role: wire.RoleWaiter}, "cli", true, "")
	started()
	detached()
	if k := kinds(); len(k) != 4 {
		t.Fatalf("a waiter was recorded: %v", k)
	}
}

// The history is pruned while the server runs, not only at start: past
// every more events recorded (viewer events in batches or others one by
// one), the registry is brought back to keep.
func TestEventsPrunedWhileRunning(t *testing.T) {
	ts := newTestServer(t, "")
	h := ts.srv.events
	h.mu.Lock()
	h.keep, h.every = 20, 10
	h.mu.Unlock()
	ctx := context.Background()
	count := func() int {
		evs, err := ts.srv.store.Events(ctx, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}
	for i := range 100 {
		if i%2 == 0 {
			h.emit(store.EventSessionRemoved, "", map[string]any{"name": "x"})
		} else {
			h.emitViewer(store.EventViewerAttached, "a1", map[string]any{"viewer": "v"}, time.Now())
		}
	}
	h.flush()
	h.pruneIfDue()
	if n := count(); n > 20+10 {
		t.Fatalf("%d events kept, want at most 30 (keep 20, pruned every 10)", n)
	}
}
