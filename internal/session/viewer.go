package session

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/termq"
	"termkeep/internal/wire"
)

// viewerChunk bounds one Output frame sent to a viewer.
const viewerChunk = 256 << 10

// resyncAfter is the moment over which a viewer more than its queue
// behind is judged: if it read at a pace that catches up (catchUpWithin),
// it is judged again over the next moment.
const resyncAfter = 250 * time.Millisecond

// catchUpWithin is the pace a viewer more than its queue behind must keep
// to count as reading rather than slow: at the rate it read since it was
// last judged, what is behind it must take at most this long to read. A
// viewer that reads nearly as fast as a flood comes (a second tab, a
// client on a loaded machine) gets every byte, the ones past the window
// from the log on disk; one that stopped, or reads a tenth as fast as the
// output (a browser drawing a flood), is skipped to the present.
const catchUpWithin = 2 * time.Second

// judgeSlowOver is how long a viewer must stay behind without keeping
// pace, or a write to it block, before it is skipped to the present: on a
// busy machine a reader (a client among many in one process, a browser
// tab) can be starved for a few hundred milliseconds, read nothing in
// them, and then read at full speed.
const judgeSlowOver = time.Second

// Defaults for ViewerOptions.
const (
	DefaultViewerQueue  = 1 << 20
	DefaultPingInterval = 30 * time.Second
	DefaultPongTimeout  = 10 * time.Second
)

// ViewerOptions says what a viewer may do and how it is served.
type ViewerOptions struct {
	// ReadOnly viewers may watch but never write input, resize or signal.
	ReadOnly bool
	// Name is the session's name, echoed in the Welcome.
	Name string
	// Kind names the viewer's client in Viewers frames: "cli", "web".
	Kind string
	// Queue is how far (in bytes) a live viewer may fall behind the output
	// before it is resynced: it skips to the present with a snapshot rather
	// than replaying a backlog it cannot draw in time. 0: DefaultViewerQueue.
	Queue int
	// PingInterval and PongTimeout: the server pings the viewer every
	// interval; a viewer silent for interval+timeout is dropped.
	PingInterval, PongTimeout time.Duration
}

// ServeViewer streams the session to one viewer over rw, a connection that
// speaks wire frames: it answers hello with a Welcome, then sends either the
// output from hello.From on, or a snapshot of the screen and the output from
// its offset (a fresh viewer, or one whose bytes the log no longer holds),
// then live output, then an Exit frame when the session ends. Frames from
// the viewer (input, resize, signal, ping) are applied as they arrive. It
// returns when the viewer goes away or the session has ended and the viewer
// has been told; it closes rw.
func (h *Host) ServeViewer(rw io.ReadWriteCloser, hello wire.Hello, opts ViewerOptions) error {
	defer rw.Close()
	if opts.Queue <= 0 {
		opts.Queue = DefaultViewerQueue
	}
	if opts.PingInterval <= 0 {
		opts.PingInterval = DefaultPingInterval
	}
	if opts.PongTimeout <= 0 {
		opts.PongTimeout = DefaultPongTimeout
	}
	if opts.Kind == "" {
		opts.Kind = "cli"
	}
	readOnly := opts.ReadOnly || hello.Role == wire.RoleWaiter
	v := &viewer{
		h: h, rw: rw, w: wire.NewWriter(rw), gone: make(chan struct{}), opts: opts,
		readOnly: readOnly, waiter: hello.Role == wire.RoleWaiter, ackCh: make(chan struct{}, 1),
	}
	v.lastHeard.Store(time.Now().UnixNano())
	if hello.Cols != 0 || hello.Rows != 0 {
		if err := wire.CheckSize(hello.Cols, hello.Rows); err != nil {
			v.send(func(w *wire.Writer) error { return w.Error(wire.CodeMalformed, "hello: "+err.Error()) })
			return err
		}
	}

	l, err := h.outlog()
	if err != nil {
		v.send(func(w *wire.Writer) error { return w.Error(wire.CodeUnavailable, "session output log: "+err.Error()) })
		return err
	}
	l.Refresh()
	h.mu.Lock()
	end, cols, rows, pid, exit := h.end, h.cols, h.rows, h.pid, h.exit
	h.mu.Unlock()
	if exit != nil {
		end = max(end, exit.End)
	}
	first := l.First()
	from := end
	resume := wire.ResumeLive
	switch {
	case hello.From == wire.FromSnapshot:
		resume = wire.ResumeSnapshot
	case hello.From >= 0:
		from, resume = uint64(hello.From), wire.ResumeBytes
		// A viewer whose bytes are gone gets the screen as it is instead;
		// a waiter reads raw output and is told of the gap.
		if from < first && !v.waiter {
			resume = wire.ResumeSnapshot
		}
	}
	if from > end {
		msg := fmt.Sprintf("offset %d is beyond the session's end (%d)", from, end)
		v.send(func(w *wire.Writer) error { return w.Error(wire.CodeUnavailable, msg) })
		return errors.New("session: " + msg)
	}

	if !v.waiter {
		v.cols, v.rows = hello.Cols, hello.Rows
		h.addViewer(v)
		defer h.removeViewer(v)
		if !readOnly && exit == nil && v.cols > 0 && v.rows > 0 {
			h.viewerActive(v, time.Now())
			if resume == wire.ResumeSnapshot {
				// Let the size reach the model, so the snapshot is drawn at
				// the size the viewer will see.
				h.waitSize(v.cols, v.rows, 500*time.Millisecond)
			}
			h.mu.Lock()
			cols, rows = h.cols, h.rows
			h.mu.Unlock()
		}
	}

	var snap []byte
	if resume == wire.ResumeSnapshot {
		// The snapshot covers at least everything logged before this
		// viewer arrived; live output continues from exactly its offset.
		data, at, c, r, err := h.Snapshot(end, max(hello.Scrollback, 0))
		if err != nil {
			msg := "screen snapshot: " + err.Error()
			v.send(func(w *wire.Writer) error { return w.Error(wire.CodeUnavailable, msg) })
			return err
		}
		snap, from, cols, rows = data, at, c, r
	}
	if !v.waiter {
		// From now on it sees every question asked after from, and answers
		// it if it may write (Host.asked).
		h.mu.Lock()
		h.questions.Live(v.id, from)
		h.mu.Unlock()
	}
	welcome := wire.Welcome{
		Version: min(max(hello.Version, wire.MinVersion), wire.Version), Session: h.ID, Name: opts.Name,
		Pid: pid, First: first, End: end, Start: max(from, first), Cols: cols, Rows: rows,
		Exited: exit != nil, Resume: resume,
	}
	if resume == wire.ResumeSnapshot {
		welcome.Start = from
	}
	v.version = welcome.Version
	if err := v.send(func(w *wire.Writer) error { return w.JSON(wire.TypeWelcome, welcome) }); err != nil {
		return err
	}
	if snap != nil {
		if err := v.send(func(w *wire.Writer) error { return w.Snapshot(from, snap) }); err != nil {
			return err
		}
	}
	go v.readLoop()
	go v.pinger()
	// A viewer that asked for the present is live from the start; one that
	// replays a backlog becomes live once it has caught up.
	return v.writeLoop(from, l, resume != wire.ResumeBytes)
}

type viewer struct {
	h        *Host
	rw       io.ReadWriteCloser
	opts     ViewerOptions
	readOnly bool
	waiter   bool
	wmu      sync.Mutex // serialises frames from the write loop, the read loop and the pinger
	w        *wire.Writer
	gone     chan struct{} // closed when the viewer's side has ended
	once     sync.Once

	lastHeard atomic.Int64  // unix nanoseconds of the last frame from the viewer
	pingDue   atomic.Uint64 // a ping the pinger left for the writer (0: none)

	// A viewer that sends Ack frames (a browser) says how far it has drawn.
	// The server then sends at most a queue beyond that, and resyncs it
	// with a snapshot when the output runs more than a queue ahead of it.
	acking atomic.Bool
	acked  atomic.Uint64
	ackCh  chan struct{} // one slot: an ack arrived

	// Guarded by the host's mu.
	id         int
	cols, rows uint16    // the viewer's own terminal size, 0 when unknown
	active     time.Time // last input, resize or arrival (sizing.go)
	sentVer    uint64    // viewers version last sent to it (write loop only)
	sentLogVer uint64    // log state version last sent to it (write loop only)
	version    int       // the protocol version agreed in the Welcome
}

func (v *viewer) send(fn func(*wire.Writer) error) error {
	v.wmu.Lock()
	defer v.wmu.Unlock()
	err := fn(v.w)
	if seq := v.pingDue.Swap(0); seq != 0 && err == nil {
		// The pinger found a write in progress: the ping goes right after it.
		err = v.w.Uint64(wire.TypeServerPing, seq)
	}
	return err
}

func (v *viewer) leave() { v.once.Do(func() { close(v.gone); v.rw.Close() }) }

func (v *viewer) readLoop() {
	defer v.leave()
	r := v.rw
	var buf []byte
	lim := newInputLimiter(time.Now()) // ratelimit.go
	var refused refusals               // a read-only viewer's refused frames
	for {
		f, err := wire.ReadFrame(r, &buf)
		if err != nil {
			if errors.Is(err, wire.ErrMalformed) {
				v.send(func(w *wire.Writer) error { return w.Error(wire.CodeMalformed, err.Error()) })
			}
			return
		}
		v.lastHeard.Store(time.Now().UnixNano())
		if err := wire.Validate(f); err != nil {
			v.send(func(w *wire.Writer) error { return w.Error(wire.CodeMalformed, err.Error()) })
			return
		}
		if !v.throttle(lim, f) {
			return
		}
		var opErr error
		if f.Type == wire.TypeInput && !v.readOnly {
			// Terminal answers are arbitrated: the first answer to an
			// outstanding question passes, every other one is dropped.
			// Deciding which answer passes and writing it happen under one
			// lock, so answers reach the program in the order they were
			// accepted, whichever viewers sent them.
			now := time.Now()
			v.h.viewerActive(v, now)
			opErr = v.h.viewerInput(v.id, f.Payload, now)
			if opErr != nil && !errors.Is(opErr, ErrEnded) {
				msg := opErr.Error()
				v.send(func(w *wire.Writer) error { return w.Error(wire.CodeUnavailable, msg) })
			}
			continue
		}
		if f.Type == wire.TypeInput && termq.OnlyAnswers(f.Payload) {
			// A read-only viewer's terminal answering the output's questions
			// on its own: never forwarded (the server answers for it), and
			// not worth an error either.
			continue
		}
		switch f.Type {
		case wire.TypeInput, wire.TypeResize, wire.TypeSignal:
			if v.readOnly {
				if refused.notify(f.Type, time.Now()) {
					v.send(func(w *wire.Writer) error {
						return w.Error(wire.CodeForbidden, "this viewer is read-only: input, resize and signals are refused")
					})
				}
				continue
			}
			switch f.Type {
			case wire.TypeResize:
				cols, rows, _ := wire.ParseResize(f.Payload)
				v.h.mu.Lock()
				v.cols, v.rows = cols, rows
				v.h.mu.Unlock()
				opErr = v.h.viewerActive(v, time.Now())
			case wire.TypeSignal:
				sig, _ := wire.ParseSignal(f.Payload)
				opErr = v.h.Signal(sig)
			}
		case wire.TypePing:
			x, _ := wire.ParseUint64(f.Type, f.Payload)
			v.send(func(w *wire.Writer) error { return w.Uint64(wire.TypePong, x) })
		case wire.TypeAck:
			off, _ := wire.ParseUint64(f.Type, f.Payload)
			for {
				cur := v.acked.Load()
				if off <= cur || v.acked.CompareAndSwap(cur, off) {
					break
				}
			}
			v.acking.Store(true)
			select {
			case v.ackCh <- struct{}{}:
			default:
			}
		case wire.TypeAnswer:
		default:
			msg := fmt.Sprintf("a viewer may not send %s frames", f.Type)
			v.send(func(w *wire.Writer) error { return w.Error(wire.CodeMalformed, msg) })
			return
		}
		if opErr != nil && !errors.Is(opErr, ErrEnded) {
			msg := opErr.Error()
			v.send(func(w *wire.Writer) error { return w.Error(wire.CodeUnavailable, msg) })
		}
	}
}

// pinger pings the viewer and drops it once it has been silent for the
// ping interval plus the pong timeout. It pings only when the connection is
// free: a viewer whose socket is full is not answering either.
func (v *viewer) pinger() {
	t := time.NewTicker(v.opts.PingInterval)
	defer t.Stop()
	var seq uint64
	for {
		select {
		case <-v.gone:
			return
		case <-t.C:
		}
		silent := time.Since(time.Unix(0, v.lastHeard.Load()))
		if silent > v.opts.PingInterval+v.opts.PongTimeout {
			v.h.log.Info("dropping a viewer that stopped answering", "silent", silent.Round(time.Second))
			v.leave()
			return
		}
		// The pinger never waits behind a write (a stalled viewer must still
		// be found silent): while one is in progress, the writer sends the
		// ping when it is done.
		seq++
		if v.wmu.TryLock() {
			v.w.Uint64(wire.TypeServerPing, seq)
			v.wmu.Unlock()
		} else {
			v.pingDue.Store(seq)
			// That write may have ended before it could see the ping.
			if v.wmu.TryLock() {
				if s := v.pingDue.Swap(0); s != 0 {
					v.w.Uint64(wire.TypeServerPing, s)
				}
				v.wmu.Unlock()
			}
		}
	}
}

// keepsPace reports whether a viewer lag bytes behind, which read (drew)
// read bytes in the last d, would at that pace read what is behind it within
// catchUpWithin.
func keepsPace(lag, read uint64, d time.Duration) bool {
	return read > 0 && float64(lag)*float64(d) <= float64(read)*float64(catchUpWithin)
}

// writeLoop sends output from off on, from the in-memory window when it
// holds off and from the log on disk otherwise, until the session ends or the
// viewer leaves. A live viewer that falls more than its queue behind is
// resynced with a snapshot.
func (v *viewer) writeLoop(off uint64, l *outlog.Log, live bool) error {
	defer v.leave()
	var cur *outlog.Cursor
	defer func() {
		if cur != nil {
			cur.Close()
		}
	}()
	var buf []byte
	var behindSince time.Time // when the viewer fell more than a queue behind
	var behindDrawn uint64    // what it had drawn then
	var behindDrain bool      // and whether the server was taking in a backlog then
	// When the last output write began, if it blocked for judgeSlowOver:
	// the viewer stopped reading then, and that is time spent behind even
	// though this loop could not look at the output's end meanwhile.
	var blockedAt time.Time
	sendOutput := func(fn func(*wire.Writer) error) error {
		t0 := time.Now()
		err := v.send(fn)
		blockedAt = time.Time{}
		if time.Since(t0) >= judgeSlowOver {
			blockedAt = t0
		}
		return err
	}
	for {
		if !v.waiter {
			if err := v.sendViewers(); err != nil {
				return err
			}
			if err := v.sendLogState(); err != nil {
				return err
			}
		}
		parts, end, exit, changed := v.h.window(off, viewerChunk)
		queue := uint64(v.opts.Queue)
		// How far behind the viewer is: what it has drawn when it says so
		// (acks), else what it has accepted from the connection.
		drawn := off
		if v.acking.Load() {
			drawn = min(v.acked.Load(), off)
		}
		// A viewer is resynced when it has stayed more than a queue behind
		// without keeping pace for judgeSlowOver: a late wake-up of this
		// goroutine or of the reader on a busy machine is not a slow
		// viewer, and costs nothing to wait out (the
		// bytes are in the window or the log, not in a buffer of its own).
		lagging := live && !v.waiter && off < end && end-drawn > queue
		// One clock reading for every judgement below: on a busy machine
		// this goroutine can be descheduled between two readings for longer
		// than resyncAfter, and a viewer found keeping pace by the first
		// must not be judged slow by the second.
		now := time.Now()
		if !lagging {
			behindSince = time.Time{}
		} else if behindSince.IsZero() {
			behindSince, behindDrawn, behindDrain = now, drawn, v.h.draining()
			if !blockedAt.IsZero() {
				behindSince = blockedAt
			}
		}
		read := max(drawn, behindDrawn) - behindDrawn // drawn since it fell behind
		lagFor := now.Sub(behindSince)
		if lagging && lagFor >= resyncAfter && blockedAt.IsZero() &&
			(keepsPace(end-drawn, read, lagFor) || behindDrain) {
			// Behind, but not slow: it kept reading, at a pace that reads
			// what is behind it soon (the bytes came in a burst, say after
			// a reconnect, or it reads nearly as fast as a flood comes), or
			// the server itself was taking in the holder's backlog meanwhile
			// (it was stopped or hung for a while), so nobody could have had
			// these bytes sooner. Judge it again over the next moment. A
			// viewer that stopped reading is slow whatever the server did.
			behindSince, behindDrawn, behindDrain = now, drawn, v.h.draining()
			lagFor = 0
		}
		if off >= end {
			live = true
		} else if lagging && lagFor >= judgeSlowOver {
			why := resyncWhy{behind: end - drawn, read: read, over: lagFor, blocked: !blockedAt.IsZero()}
			behindSince = time.Time{}
			at, err := v.resync(end, why)
			if err != nil {
				return err
			}
			off = at
			if v.acking.Load() {
				// Count the snapshot as drawn: the viewer acks past it soon,
				// and meanwhile it must not be resynced again at once.
				v.acked.Store(at)
			}
			continue
		}
		if v.acking.Load() && off-drawn >= queue && off < end {
			// A queue is in flight and undrawn: wait for the viewer.
			select {
			case <-v.ackCh:
			case <-changed:
			case <-v.gone:
				return nil
			case <-time.After(time.Second):
			}
			continue
		}
		if len(parts) > 0 {
			n := 0
			for _, p := range parts {
				n += len(p)
			}
			if err := sendOutput(func(w *wire.Writer) error { return w.OutputParts(off, parts) }); err != nil {
				return err
			}
			off += uint64(n)
			continue
		}
		if off < end {
			// Behind the window: read the log on disk.
			if cur == nil {
				cur = l.Cursor(off)
				buf = make([]byte, viewerChunk)
			} else if cur.Offset() != off {
				cur.Seek(off)
			}
			n, err := cur.Read(buf[:min(uint64(len(buf)), end-off)])
			var gap *outlog.GapError
			switch {
			case n > 0:
				if err := sendOutput(func(w *wire.Writer) error { return w.Output(off, buf[:n]) }); err != nil {
					return err
				}
				off += uint64(n)
				continue
			case errors.Is(err, outlog.ErrCompacted):
				l.Refresh()
				if !v.waiter {
					at, err := v.resync(end, resyncWhy{behind: end - off, gone: true, first: l.First()})
					if err != nil {
						return err
					}
					off = at
					continue
				}
				first := min(max(l.First(), off+1), end)
				if err := v.send(func(w *wire.Writer) error { return w.Gap(off, first) }); err != nil {
					return err
				}
				off = first
				continue
			case errors.As(err, &gap):
				// Never logged (a full disk): lost to a viewer this far behind.
				if err := v.send(func(w *wire.Writer) error { return w.Gap(gap.Start, gap.End) }); err != nil {
					return err
				}
				off = gap.End
				continue
			case errors.Is(err, outlog.ErrCorrupt):
				// Damaged bytes are lost; say so and carry on after them.
				next := min(max(l.SkipCorrupt(off), off+1), end)
				v.h.log.Error("output log is damaged; skipping", "from", off, "to", next, "err", err)
				if err := v.send(func(w *wire.Writer) error { return w.Gap(off, next) }); err != nil {
					return err
				}
				off = next
				continue
			case err != nil && err != io.EOF:
				msg := "read output log: " + err.Error()
				v.send(func(w *wire.Writer) error { return w.Error(wire.CodeInternal, msg) })
				return err
			}
			if to, ok := v.h.unlogged(off); ok {
				if err := v.send(func(w *wire.Writer) error { return w.Gap(off, to) }); err != nil {
					return err
				}
				off = to
				continue
			}
			// The log has not caught up with what the holder sent (it is
			// written first, so this is a refresh away); wait a moment.
			select {
			case <-v.gone:
				return nil
			case <-time.After(5 * time.Millisecond):
			}
			continue
		}
		if exit != nil {
			e := *exit
			return v.send(func(w *wire.Writer) error { return w.JSON(wire.TypeExit, e) })
		}
		select {
		case <-changed:
		case <-v.gone:
			return nil
		}
	}
}

// resyncWhy is what a resync was decided on, for the log: how far behind
// the viewer was, and what it read over how long while behind (or that a
// write to it blocked for judgeSlowOver: it had stopped reading; or that the
// log no longer holds its bytes).
type resyncWhy struct {
	behind, read uint64
	over         time.Duration
	blocked      bool
	gone         bool
	first        uint64 // gone: the log's oldest byte then
}

// resync skips a viewer to the present: a snapshot at (at least) end, from
// whose offset its output continues.
func (v *viewer) resync(end uint64, why resyncWhy) (uint64, error) {
	data, at, _, _, err := v.h.Snapshot(end, 0)
	if err != nil {
		return 0, err
	}
	v.h.resyncs.Add(1)
	v.h.meter.Resyncs.Add(1)
	args := []any{"viewer", v.id, "offset", at,
		"behind", why.behind, "read", why.read, "over", why.over.Round(time.Millisecond), "write_blocked", why.blocked, "bytes_gone", why.gone}
	if why.gone {
		args = append(args, "log_first", why.first)
	}
	v.h.log.Info("viewer fell behind; skipped it to the present with a snapshot", args...)
	if err := v.send(func(w *wire.Writer) error { return w.Snapshot(at, data) }); err != nil {
		return 0, err
	}
	return at, nil
}

// sendViewers sends a Viewers frame when the set of viewers or the size
// changed since the last one this viewer got.
func (v *viewer) sendViewers() error {
	h := v.h
	h.mu.Lock()
	if v.sentVer == h.viewersVer {
		h.mu.Unlock()
		return nil
	}
	v.sentVer = h.viewersVer
	msg := h.viewersLocked()
	msg.You = v.id
	h.mu.Unlock()
	return v.send(func(w *wire.Writer) error { return w.JSON(wire.TypeViewers, msg) })
}

// sendLogState tells the viewer when the session's log stops or resumes.
func (v *viewer) sendLogState() error {
	h := v.h
	if v.version < 2 {
		return nil // log frames came with version 2
	}
	h.mu.Lock()
	if v.sentLogVer == h.logVer {
		h.mu.Unlock()
		return nil
	}
	v.sentLogVer = h.logVer
	st := h.logState
	h.mu.Unlock()
	return v.send(func(w *wire.Writer) error { return w.JSON(wire.TypeLog, st) })
}
