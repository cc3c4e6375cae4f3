package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

func TestEvents(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := context.Background()

	if id, err := s.LastEventID(ctx); err != nil || id != 0 {
		t.Fatalf("LastEventID on an empty registry = %d, %v", id, err)
	}
	kinds := []string{EventSessionCreated, EventViewerAttached, EventViewerDetached, EventProcessExited}
	var added []Event
	for i, k := range kinds {
		e, err := s.AddEvent(ctx, Event{Kind: k, Session: "abc", Detail: json.RawMessage(`{"n":` + string(rune('0'+i)) + `}`)})
		if err != nil {
			t.Fatalf("AddEvent %s: %v", k, err)
		}
		if e.ID != int64(i+1) || e.At.IsZero() {
			t.Fatalf("AddEvent %s = %+v, want id %d and a time", k, e, i+1)
		}
		added = append(added, e)
	}
	if _, err := s.AddEvent(ctx, Event{Kind: "x", Detail: json.RawMessage(`[1]`)}); err == nil {
		t.Error("AddEvent accepted a detail that is not an object")
	}
	if _, err := s.AddEvent(ctx, Event{}); err == nil {
		t.Error("AddEvent accepted an event without a kind")
	}
	e, err := s.AddEvent(ctx, Event{Kind: EventSessionClosed})
	if err != nil || string(e.Detail) != "{}" {
		t.Fatalf("AddEvent without detail = %+v, %v", e, err)
	}

	all, err := s.Events(ctx, 0, 0)
	if err != nil || len(all) != 5 {
		t.Fatalf("Events(0) = %d events, %v; want 5", len(all), err)
	}
	for i, e := range added {
		got := all[i]
		if got.ID != e.ID || got.Kind != e.Kind || got.Session != "abc" || !got.At.Equal(e.At) || string(got.Detail) != string(e.Detail) {
			t.Errorf("event %d = %+v, want %+v", i, got, e)
		}
	}
	page, err := s.Events(ctx, 2, 2)
	if err != nil || len(page) != 2 || page[0].ID != 3 || page[1].ID != 4 {
		t.Fatalf("Events(2, 2) = %+v, %v", page, err)
	}

	n, err := s.PruneEvents(ctx, 2)
	if err != nil || n != 3 {
		t.Fatalf("PruneEvents(2) = %d, %v; want 3", n, err)
	}
	e, err = s.AddEvent(ctx, Event{Kind: EventSessionRemoved})
	if err != nil || e.ID != 6 {
		t.Fatalf("after pruning the next id is %d (%v), want 6: ids are never reused", e.ID, err)
	}
	rest, _ := s.Events(ctx, 0, 0)
	if len(rest) != 3 || rest[0].ID != 4 {
		t.Fatalf("after pruning: %+v", rest)
	}
	if id, _ := s.LastEventID(ctx); id != 6 {
		t.Errorf("LastEventID = %d, want 6", id)
	}
}

// AddEvents writes a batch in one transaction: in order, with ids that
// follow, and nothing at all when one event of it is bad.
func TestAddEvents(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := context.Background()
	if _, err := s.AddEvent(ctx, Event{Kind: EventSessionCreated}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	got, err := s.AddEvents(ctx, []Event{
		{Kind: EventViewerAttached, Session: "a", At: at, Detail: json.RawMessage(`{"viewer":"v1"}`)},
		{Kind: EventViewerDetached, Session: "a"},
	})
	if err != nil || len(got) != 2 || got[0].ID != 2 || got[1].ID != 3 || !got[0].At.Equal(at) || got[1].At.IsZero() || string(got[1].Detail) != "{}" {
		t.Fatalf("AddEvents = %+v, %v", got, err)
	}
	if _, err := s.AddEvents(ctx, []Event{{Kind: EventViewerAttached}, {Kind: ""}}); err == nil {
		t.Fatal("a batch with an event without a kind was accepted")
	}
	all, err := s.Events(ctx, 0, 0)
	if err != nil || len(all) != 3 || all[1].Detail == nil || string(all[1].Detail) != `{"viewer":"v1"}` {
		t.Fatalf("Events = %+v, %v", all, err)
	}
}
