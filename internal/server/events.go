package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/server/restorepolicy"
	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// eventsKept bounds the history kept in the registry; older events are
// pruned when the server starts.
const eventsKept = 10000

// subBuffer is how many events a subscriber may have pending before it is
// dropped (it then resumes from the registry by id).
const subBuffer = 256

// eventHub is the server's event history and its live subscribers. Every
// event is written to the registry first and then offered to each
// subscriber without waiting: one whose buffer is full is dropped (its
// channel closed) and reads what it missed from the registry by id. A slow
// reader of the event stream therefore never delays a session, a viewer or
// another reader.
type eventHub struct {
	store *store.Store
	log   *slog.Logger
	// metrics counts lifecycle events and times their writes (nil: none).
	metrics *metrics

	// mu guards subs, followersGone and closed, and is held across the
	// registry write and the fan-out, so every subscriber receives events
	// in id order.
	mu     sync.Mutex
	subs   map[*eventSub]struct{}
	closed bool
	// followersGone is set once a stopping server has ended every
	// subscription: events are still recorded until close.
	followersGone bool
	// skipUntil is set when the registry refused an event for being
	// locked or read-only: until then none is tried (registry.go), so no
	// viewer's attach waits out the busy timeout for its event.
	skipUntil time.Time
}

type eventSub struct {
	// ch is closed when the subscriber fell behind or the hub closed.
	ch chan store.Event
}

func newEventHub(ctx context.Context, st *store.Store, log *slog.Logger) *eventHub {
	if n, err := st.PruneEvents(ctx, eventsKept); err != nil {
		log.Warn("prune old events", "err", err)
	} else if n > 0 {
		log.Info("pruned old events", "deleted", n)
	}
	return &eventHub{store: st, log: log, subs: make(map[*eventSub]struct{})}
}

// emit records an event; detail is encoded as a JSON object. A failure is
// logged, never returned: events describe what happened, they do not
// decide it.
func (h *eventHub) emit(kind, session string, detail map[string]any) {
	raw, err := json.Marshal(detail)
	if err != nil || detail == nil {
		raw = []byte("{}")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || time.Now().Before(h.skipUntil) {
		return
	}
	h.metrics.countEvent(kind)
	start := time.Now()
	e, err := h.store.AddEvent(ctx, store.Event{Kind: kind, Session: session, Detail: raw})
	h.metrics.observeWrite("event", start, err)
	if err != nil {
		h.log.Warn("record event", "kind", kind, "session", session, "err", err)
		if errors.Is(err, store.ErrLocked) || errors.Is(err, store.ErrReadOnly) || errors.Is(err, store.ErrFull) {
			h.skipUntil = time.Now().Add(registryRetry)
			h.log.Warn("events are not recorded while the registry refuses writes; trying again later", "after", registryRetry)
		}
		return
	}
	for sub := range h.subs {
		select {
		case sub.ch <- e:
		default:
			delete(h.subs, sub)
			close(sub.ch)
		}
	}
}

// subscribe returns a subscriber that receives every event emitted from
// now on, until it falls behind or the hub closes; ok is false once the hub
// has closed.
func (h *eventHub) subscribe() (sub *eventSub, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.followersGone {
		return nil, false
	}
	sub = &eventSub{ch: make(chan store.Event, subBuffer)}
	h.subs[sub] = struct{}{}
	return sub, true
}

func (h *eventHub) unsubscribe(sub *eventSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[sub]; ok {
		delete(h.subs, sub)
		close(sub.ch)
	}
}

// endFollowers ends every subscription and refuses new ones, so that the
// event streams end and a stopping server's HTTP shutdown need not wait for
// them; events are still recorded until close.
func (h *eventHub) endFollowers() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.followersGone = true
	for sub := range h.subs {
		close(sub.ch)
	}
	h.subs = nil
}

// close ends every subscription; later events are not recorded. A
// stopping server calls it only once every host has stopped, so that no
// session's end goes unrecorded.
func (h *eventHub) close() {
	h.endFollowers()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
}

func apiEvent(e store.Event) api.Event {
	return api.Event{ID: e.ID, At: e.At, Kind: e.Kind, Session: e.Session, Detail: e.Detail}
}

// handleEvents streams the event history as Server-Sent Events: each event
// as "id: N", "event: kind", "data: {json}". It starts after the id in
// Last-Event-ID or ?after= (default: the whole kept history); with
// ?follow=0 it ends after the stored events, else it stays open for new
// ones.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var after int64
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "event id %q is not a number; resume with the id of the last event you have", v)
			return
		}
		after = n
	}
	follow, err := queryBool(r, "follow", true)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()

	show := s.eventFilter(ctx)
	send := func(e store.Event) error {
		if show != nil && !show(e) {
			return nil
		}
		data, err := json.Marshal(apiEvent(e))
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Kind, data)
		return err
	}
	keepalive := time.NewTicker(20 * time.Second)
	defer keepalive.Stop()
	for {
		// Subscribe before reading the registry: an event is then either
		// in what the registry returns or in the channel (or both, and the
		// id filter drops the copy).
		var sub *eventSub
		if follow {
			var ok bool
			if sub, ok = s.events.subscribe(); !ok {
				return
			}
		}
		for {
			page, err := s.store.Events(ctx, after, 500)
			if err != nil {
				if sub != nil {
					s.events.unsubscribe(sub)
				}
				if ctx.Err() == nil {
					s.log.Warn("read events", "err", err)
				}
				return
			}
			for _, e := range page {
				if err := send(e); err != nil {
					if sub != nil {
						s.events.unsubscribe(sub)
					}
					return
				}
				after = e.ID
			}
			if len(page) < 500 {
				break
			}
		}
		flush()
		if !follow {
			return
		}
	live:
		for {
			select {
			case e, ok := <-sub.ch:
				if !ok {
					// Dropped for falling behind, or the server is
					// stopping: catch up from the registry, or end.
					break live
				}
				if e.ID <= after {
					continue
				}
				if err := send(e); err != nil {
					s.events.unsubscribe(sub)
					return
				}
				after = e.ID
				flush()
			case <-keepalive.C:
				if _, err := fmt.Fprint(w, ": keepalive\n\n"); err != nil {
					s.events.unsubscribe(sub)
					return
				}
				flush()
			case <-ctx.Done():
				s.events.unsubscribe(sub)
				return
			}
		}
	}
}

// viewerArrival is viewerEvents for a viewer that ServeViewer serves:
// started (its ViewerOptions.Started) records the arrival once the viewer
// has its screen, so that the registry's query and insert and the log
// line do not delay it; detached records the departure, and the arrival
// first if the viewer went before its first frames. Both run on the
// goroutine that serves the viewer.
func (s *Server) viewerArrival(sessionID string, hello wire.Hello, via string, readOnly bool, remote string) (started, detached func()) {
	var left func()
	started = func() { left = s.viewerEvents(sessionID, hello, via, readOnly, remote) }
	detached = func() {
		if left == nil {
			started()
		}
		left()
	}
	return started, detached
}

// viewerEvents records a viewer attaching and returns the function that
// records it leaving. Waiters (wait, capture) are not viewers and are not
// recorded.
func (s *Server) viewerEvents(sessionID string, hello wire.Hello, via string, readOnly bool, remote string) (detached func()) {
	if hello.Role != wire.RoleViewer {
		return func() {}
	}
	var b [4]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	mode := "control"
	if readOnly {
		mode = "view"
	}
	detail := map[string]any{"viewer": id, "via": via, "mode": mode}
	if remote != "" {
		detail["remote"] = remote
	}
	start := s.cfg.Now()
	name := ""
	if sess, err := s.store.Session(context.Background(), sessionID); err == nil {
		name = sess.Name
	}
	s.log.Info("viewer attached", "session", sessionID, "name", name, "viewer", id, "kind", via, "mode", mode, "remote", remote)
	s.events.emit(store.EventViewerAttached, sessionID, detail)
	return func() {
		secs := int64(s.cfg.Now().Sub(start).Seconds())
		detail["seconds"] = secs
		s.log.Info("viewer detached", "session", sessionID, "name", name, "viewer", id, "kind", via, "remote", remote, "seconds", secs)
		s.events.emit(store.EventViewerDetached, sessionID, detail)
	}
}

// endEvent records a session's end under the kind its state names.
// An interrupted session's names its cause when it is known.
func (s *Server) endEvent(id string, st store.State, e wire.Exit, cause restorepolicy.Cause) {
	kind := store.EventSessionInterrupted
	switch st {
	case store.StateClosed:
		kind = store.EventSessionClosed
	case store.StateExited:
		kind = store.EventProcessExited
	}
	detail := map[string]any{"state": string(st), "exit_code": e.ExitCode}
	if e.Reason != "" {
		detail["reason"] = e.Reason
	}
	if e.Signal != 0 {
		detail["signal"] = e.Signal
	}
	if cause != restorepolicy.Unknown {
		detail["cause"] = string(cause)
	}
	s.events.emit(kind, id, detail)
}
