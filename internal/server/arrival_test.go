package server

import (
	"context"
	"slices"
	"testing"

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
