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
// pruned when the server starts and, while it runs, whenever pruneEvery
// more have been recorded (so the registry holds at most
// eventsKept+pruneEvery).
const (
	eventsKept = 10000
	pruneEvery = eventsKept / 10
)

// Viewer arrivals and departures are not written by the viewer's
// goroutine: they are queued, and one writer (eventHub.run) writes all
// that are queued in one transaction, then all that queued meanwhile, and
// so on (group commit). Alone, an event is written at once; in a flood of
// viewers, the registry gets one write per batch instead of one per
// viewer, and a create, a list or any owner request waits behind at most
// one batch, never behind the viewers. At most viewerBatchMax wait at
// once; past that (the registry stalled) the rest are counted in the log
// and not recorded.
const viewerBatchMax = 8192

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
	// sincePrune counts the events recorded since the last prune; keep
	// and every are eventsKept and pruneEvery (smaller in tests).
	sincePrune  int
	keep, every int

	// fmu makes flushes one at a time, so that a flush returns only once
	// every event queued before it is written. Lock order: fmu, then qmu
	// or mu; qmu is never held while mu is wanted.
	fmu sync.Mutex
	// qmu guards queued and lost, the viewer events waiting for their
	// batch.
	qmu    sync.Mutex
	queued []store.Event
	lost   int
	// kick wakes the batch writer (run): a first event queued, or a
	// prune due. stop ends it; ran is closed once it has written the
	// last batch.
	kick chan struct{}
	stop chan struct{}
	ran  chan struct{}
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
	h := &eventHub{store: st, log: log, subs: make(map[*eventSub]struct{}), keep: eventsKept, every: pruneEvery,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), ran: make(chan struct{})}
	go h.run()
	return h
}

// run is the batch writer: woken by a queued viewer event, it writes
// what is queued until nothing is, and prunes the history when due. It
// ends, after a last batch, when stop is closed.
func (h *eventHub) run() {
	defer close(h.ran)
	for {
		select {
		case <-h.kick:
		case <-h.stop:
			h.flush()
			return
		}
		for h.flush() {
		}
		h.pruneIfDue()
	}
}

func (h *eventHub) wake() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// emitViewer queues a viewer event for the batch writer (see
// viewerBatchMax), with the time it happened; it never waits for the
// registry.
func (h *eventHub) emitViewer(kind, session string, detail map[string]any, at time.Time) {
	raw, err := json.Marshal(detail)
	if err != nil || detail == nil {
		raw = []byte("{}")
	}
	h.metrics.countEvent(kind)
	h.qmu.Lock()
	if len(h.queued) >= viewerBatchMax {
		h.lost++
		h.qmu.Unlock()
		return
	}
	h.queued = append(h.queued, store.Event{Kind: kind, Session: session, Detail: raw, At: at})
	h.qmu.Unlock()
	h.wake()
}

// flush writes the queued viewer events in one transaction and offers
// them to the subscribers; it reports whether there were any.
func (h *eventHub) flush() bool {
	h.fmu.Lock()
	defer h.fmu.Unlock()
	h.qmu.Lock()
	batch, lost := h.queued, h.lost
	h.queued, h.lost = nil, 0
	h.qmu.Unlock()
	if lost > 0 {
		h.log.Warn("viewer events not recorded: too many waited for the registry", "lost", lost)
	}
	if len(batch) == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || time.Now().Before(h.skipUntil) {
		return true
	}
	start := time.Now()
	stored, err := h.store.AddEvents(ctx, batch)
	h.metrics.observeWrite("event", start, err)
	if err != nil {
		h.recordFailed(batch[0].Kind, "", len(batch), err)
		return true
	}
	h.sincePrune += len(stored)
	for _, e := range stored {
		h.fanOut(e)
	}
	return true
}

// pruneIfDue prunes the history once pruneEvery events were recorded
// since the last prune.
func (h *eventHub) pruneIfDue() {
	h.mu.Lock()
	due := h.sincePrune >= h.every && !h.closed
	if due {
		h.sincePrune = 0
	}
	h.mu.Unlock()
	if !due {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.mu.Lock()
	keep := h.keep
	h.mu.Unlock()
	if _, err := h.store.PruneEvents(ctx, keep); err != nil {
		h.log.Warn("prune old events", "err", err)
	}
}

// recordFailed logs a refused write of n events and, when the registry is
// locked or read-only, stops trying for a while. mu is held.
func (h *eventHub) recordFailed(kind, session string, n int, err error) {
	h.log.Warn("record event", "kind", kind, "session", session, "events", n, "err", err)
	if errors.Is(err, store.ErrLocked) || errors.Is(err, store.ErrReadOnly) || errors.Is(err, store.ErrFull) {
		h.skipUntil = time.Now().Add(registryRetry)
		h.log.Warn("events are not recorded while the registry refuses writes; trying again later", "after", registryRetry)
	}
}

// fanOut offers e to every subscriber; one whose buffer is full is
// dropped. mu is held.
func (h *eventHub) fanOut(e store.Event) {
	for sub := range h.subs {
		select {
		case sub.ch <- e:
		default:
			delete(h.subs, sub)
			close(sub.ch)
		}
	}
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
		h.recordFailed(kind, session, 1, err)
		return
	}
	h.fanOut(e)
	if h.sincePrune++; h.sincePrune >= h.every {
		h.wake()
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
	close(h.stop)
	<-h.ran
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
func (s *Server) viewerArrival(sess store.Session, hello wire.Hello, via wire.ViewerKind, readOnly bool, remote string) (started, detached func()) {
	var left func()
	started = func() { left = s.viewerEvents(sess, hello, via, readOnly, remote) }
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
func (s *Server) viewerEvents(sess store.Session, hello wire.Hello, via wire.ViewerKind, readOnly bool, remote string) (detached func()) {
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
	// The session's row as the viewer found it: a crowd of viewers costs
	// the registry no reads here.
	sessionID, name := sess.ID, sess.Name
	s.log.Info("viewer attached", "session", sessionID, "name", name, "viewer", id, "kind", via, "mode", mode, "remote", remote)
	s.events.emitViewer(store.EventViewerAttached, sessionID, detail, start)
	return func() {
		now := s.cfg.Now()
		secs := int64(now.Sub(start).Seconds())
		detail["seconds"] = secs
		s.log.Info("viewer detached", "session", sessionID, "name", name, "viewer", id, "kind", via, "remote", remote, "seconds", secs)
		s.events.emitViewer(store.EventViewerDetached, sessionID, detail, now)
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
