package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/session/flow"
	"termkeep/internal/session/liveness"
	"termkeep/internal/session/sizepolicy"
	"termkeep/internal/termq"
	"termkeep/internal/wire"
)

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
	// Kind names the viewer's client in Viewers frames (ViewerCLI when
	// empty).
	Kind wire.ViewerKind
	// ViewerName, when set, is the name the others are shown for this
	// viewer (a share link's name), whatever its hello says.
	ViewerName string
	// Queue is how far (in bytes) a live viewer may fall behind the output
	// before it is resynced: it skips to the present with a snapshot rather
	// than replaying a backlog it cannot draw in time. 0: DefaultViewerQueue.
	Queue int
	// PingInterval and PongTimeout: the server pings the viewer every
	// interval; a viewer silent for interval+timeout while the server ran
	// on time is dropped (liveness.Pinger).
	PingInterval, PongTimeout time.Duration
	// Party is who the viewer is, for the server's list of who watches
	// (Host.Parties); the host only keeps it.
	Party Party
	// Local: the viewer is on the server's unix socket, from the server's
	// own uid; only such a viewer may hand over its terminal for a lane
	// (viewer_lane.go), and its connection must be an FDTaker.
	Local bool
	// Pid is the viewer's process, when known (0: unknown): the holder
	// reads an input lane's terminal only for it (viewer_lanein.go).
	Pid int
	// Started, when set, is called once the viewer has its first frames
	// (the welcome, and its screen when it starts from one) and before
	// any frame from it is applied: the server's bookkeeping for a new
	// viewer (an event, a log line), kept off the path to its screen.
	Started func()
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
	// ctx ends when the viewer leaves: a snapshot waits for the screen
	// model until then (or until the server stops), never giving up on
	// a model that is merely behind.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v := newViewer(ctx, cancel, h, rw, hello, opts.withDefaults())
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
	st, err := v.startAt(l, hello)
	if err != nil {
		msg := err.Error()
		v.send(func(w *wire.Writer) error { return w.Error(wire.CodeUnavailable, msg) })
		return errors.New("session: " + msg)
	}
	if !v.waiter {
		v.join(hello)
		defer h.removeViewer(v)
		v.arrive(hello, &st)
	}
	if err := v.greet(hello, &st); err != nil {
		return err
	}
	if v.opts.Started != nil {
		v.opts.Started()
	}
	readDone := make(chan struct{})
	go func() { defer close(readDone); v.readLoop() }()
	go v.pinger()
	err = v.writeLoop(l, flow.New(st.from, st.start.Live(), flow.Config{Queue: uint64(v.opts.Queue), Waiter: v.waiter}))
	// The viewer is removed (the deferred removeViewer) only once its
	// read loop has ended: a frame it read is acted on before the viewer
	// is gone, never after.
	v.leave()
	<-readDone
	return err
}

// withDefaults returns o with its zero values given their defaults.
func (o ViewerOptions) withDefaults() ViewerOptions {
	if o.Queue <= 0 {
		o.Queue = DefaultViewerQueue
	}
	if o.PingInterval <= 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.PongTimeout <= 0 {
		o.PongTimeout = DefaultPongTimeout
	}
	if o.Kind == "" {
		o.Kind = wire.ViewerCLI
	}
	return o
}

func newViewer(ctx context.Context, cancel context.CancelFunc, h *Host, rw io.ReadWriteCloser, hello wire.Hello, opts ViewerOptions) *viewer {
	v := &viewer{
		h: h, rw: rw, w: wire.NewWriter(rw), gone: make(chan struct{}), ctx: ctx, cancel: cancel, opts: opts,
		readOnly: opts.ReadOnly || hello.Role == wire.RoleWaiter, waiter: hello.Role == wire.RoleWaiter, ackCh: make(chan struct{}, 1),
		scrollback: max(hello.Scrollback, 0),
	}
	v.born = h.now()
	return v
}

// viewerStart is where a viewer starts, as ServeViewer finds the session
// when it arrives and then decides.
type viewerStart struct {
	first, end uint64 // the log's first byte, the session's end
	cols, rows uint16
	pid        int
	exit       *wire.Exit
	start      flow.Start
	from       uint64 // where its output starts: start.From, or its snapshot's offset
}

// startAt reads the session as the viewer saying hello finds it, and
// where it starts (flow.Resume).
func (v *viewer) startAt(l *outlog.Log, hello wire.Hello) (viewerStart, error) {
	h := v.h
	var st viewerStart
	h.mu.Lock()
	st.end, st.cols, st.rows, st.pid, st.exit = h.end, h.size.cols, h.size.rows, h.pid, h.exit
	h.mu.Unlock()
	if st.exit != nil {
		st.end = max(st.end, st.exit.End)
	}
	st.first = l.First()
	start, err := flow.Resume(hello, st.first, st.end)
	st.start, st.from = start, start.From
	return st, err
}

// join adds v to the room, named as its hello says, with the size it
// reported.
func (v *viewer) join(hello wire.Hello) {
	v.name = cmp.Or(v.opts.ViewerName, viewerName(hello.Name))
	// A viewer of version 6 takes the size on arrival only when its
	// hello says fit; an older one by arriving with a size, as before.
	v.sz = sizepolicy.Viewer{Writable: !v.readOnly, IgnoreSize: hello.IgnoreSize, Legacy: hello.Version < 6}
	v.h.addViewer(v)
}

// arrive does what a joining viewer's hello asks of the others and of the
// session's size, and updates st's size to the one its start is drawn
// at.
func (v *viewer) arrive(hello wire.Hello, st *viewerStart) {
	h := v.h
	if hello.DetachOthers && !v.readOnly {
		v.detachOthers()
	}
	if st.exit != nil || hello.Cols == 0 || hello.Rows == 0 {
		return
	}
	ev := sizepolicy.Report
	if hello.Fit {
		ev = sizepolicy.Fit
	}
	h.viewerSize(v, ev, hello.Cols, hello.Rows, h.now())
	h.mu.Lock()
	want := h.size.reqCols == hello.Cols && h.size.reqRows == hello.Rows && h.size.owner == v.id
	h.mu.Unlock()
	if want && st.start.Snapshot() {
		// Let the size it took reach the model, so the snapshot is
		// drawn at the size the viewer will see.
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		h.AwaitSize(ctx, hello.Cols, hello.Rows)
		cancel()
	}
	h.mu.Lock()
	st.cols, st.rows = h.size.cols, h.size.rows
	h.mu.Unlock()
}

// greet sends the viewer its first frames: the welcome, then its screen
// when it starts from one (and the history its hello asked for), and
// moves st.from to where its output continues.
func (v *viewer) greet(hello wire.Hello, st *viewerStart) error {
	h := v.h
	var snap []byte
	firstLines, historyLines := snapshotLines(hello) // screenfirst.go
	if st.start.Snapshot() {
		// The snapshot covers at least everything logged before this
		// viewer arrived; live output continues from exactly its offset.
		data, at, c, r, err := h.Snapshot(v.ctx, st.end, firstLines)
		if err != nil {
			msg := "screen snapshot: " + err.Error()
			v.send(func(w *wire.Writer) error { return w.Error(wire.CodeUnavailable, msg) })
			return err
		}
		snap, st.from, st.cols, st.rows = data, at, c, r
	}
	if !v.waiter {
		// From now on it sees every question asked after from, and answers
		// it if it may write (Host.asked).
		h.q.live(v.id, st.from)
	}
	welcome := v.welcome(hello, st)
	if err := v.send(func(w *wire.Writer) error { return w.JSON(wire.TypeWelcome, welcome) }); err != nil {
		return err
	}
	if snap == nil {
		return nil
	}
	if err := v.send(func(w *wire.Writer) error { return w.Snapshot(st.from, snap) }); err != nil {
		return err
	}
	if historyLines == 0 {
		return nil
	}
	data, at, ok, err := h.historySnapshot(v.ctx, st.from, historyLines, st.cols, st.rows)
	if err != nil || !ok {
		return err
	}
	if err := v.send(func(w *wire.Writer) error { return w.Snapshot(at, data) }); err != nil {
		return err
	}
	st.from = at
	return nil
}

// welcome is the viewer's Welcome; it settles the protocol version, and
// the viewer's lane with it.
func (v *viewer) welcome(hello wire.Hello, st *viewerStart) wire.Welcome {
	welcome := wire.Welcome{
		Version: min(max(hello.Version, wire.MinVersion), wire.Version), Session: v.h.ID, Name: v.opts.Name,
		Pid: st.pid, First: st.first, End: st.end, Start: max(st.from, st.first), Cols: st.cols, Rows: st.rows,
		Exited: st.exit != nil, Resume: st.start.Resume,
	}
	if st.start.Snapshot() {
		welcome.Start = st.from
	}
	v.version = welcome.Version
	if !v.waiter && wire.ViewerLanes(v.version) {
		v.lane = newViewerLane(hello.LaneToken)
		if hello.Claim != 0 && !st.start.Snapshot() && wire.LaneClaims(v.version) {
			// Its last connection was lost while a lane may have written
			// past from: held until the holder says how far.
			v.lane.claim = hello.Claim
			v.lane.gate.Claim(st.from)
		}
	}
	return welcome
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
	ctx      context.Context
	cancel   context.CancelFunc // ends ctx; called with gone closed
	once     sync.Once

	// lastHeard is when the last frame from the viewer came, as time since
	// born: monotonic, so a step of the wall clock silences nobody.
	born      time.Time
	lastHeard atomic.Int64
	pingDue   atomic.Uint64 // a ping the pinger left for the writer (0: none)

	// A viewer that sends Ack frames (a browser) says how far it has drawn.
	// The server then sends at most a queue beyond that, and resyncs it
	// with a snapshot when the output runs more than a queue ahead of it.
	acking atomic.Bool
	acked  atomic.Uint64
	ackCh  chan struct{} // one slot: an ack arrived

	// Guarded by the host's mu.
	id          int
	name        string            // as the others are shown it (sizing.go, viewerName)
	sz          sizepolicy.Viewer // its size and when it took the session's (sizing.go)
	sentVer     uint64            // viewers version last sent to it (write loop only)
	sentLogVer  uint64            // log state version last sent to it (write loop only)
	sentModeVer uint64            // term-mode version last sent to it (write loop only)
	version     int               // the protocol version agreed in the Welcome
	scrollback  int               // lines of history its snapshots carry (its hello's)
	sizeSeq     uint64            // the last size change it was told (write loop only; sizing.go)

	lane *viewerLane // its output lane (viewer_lane.go); nil for a viewer that cannot have one
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

// detachOthers detaches the terminal viewers other than v (attach -d):
// each is told why, so that it exits rather than reconnects, then dropped.
// A viewer too slow to take the frame is dropped all the same.
func (v *viewer) detachOthers() {
	h := v.h
	h.mu.Lock()
	var others []*viewer
	for o := range h.room.viewers {
		if o != v && o.opts.Kind == wire.ViewerCLI && !o.waiter {
			others = append(others, o)
		}
	}
	h.mu.Unlock()
	for _, o := range others {
		go func() {
			// Its terminal gets nothing after its farewell: its lane ends
			// first (viewer_lane.go).
			o.endLane(2 * time.Second)
			told := make(chan struct{})
			go func() {
				o.send(func(w *wire.Writer) error {
					return w.Error(wire.CodeDetached, "detached: the session was attached elsewhere with attach -d")
				})
				close(told)
			}()
			select {
			case <-told:
			case <-time.After(2 * time.Second):
			}
			o.leave()
		}()
	}
}

// left reports whether the viewer's side has ended.
func (v *viewer) left() bool {
	select {
	case <-v.gone:
		return true
	default:
		return false
	}
}

func (v *viewer) leave() { v.once.Do(func() { close(v.gone); v.cancel(); v.rw.Close() }) }

func (v *viewer) readLoop() {
	defer v.leave()
	r := v.rw
	var buf []byte
	lim := newInputLimiter(time.Now()) // ratelimit.go; real time, as its waits
	var refused refusals               // a read-only viewer's refused frames
	for {
		f, err := wire.ReadFrame(r, &buf)
		if err != nil {
			if errors.Is(err, wire.ErrMalformed) {
				v.send(func(w *wire.Writer) error { return w.Error(wire.CodeMalformed, err.Error()) })
			}
			return
		}
		v.lastHeard.Store(int64(v.h.now().Sub(v.born)))
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
			now := v.h.now()
			v.h.viewerSize(v, sizepolicy.Type, 0, 0, now)
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
		case wire.TypeResize, wire.TypeFit:
			// A report of the viewer's window, or a request to take the
			// session's size: the policy decides (sizing.go). A read-only
			// viewer's is recorded, never refused with an error: it only
			// says how large its window is.
			ev := sizepolicy.Report
			if f.Type == wire.TypeFit {
				ev = sizepolicy.Fit
			}
			cols, rows, _ := wire.ParseResize(f.Payload)
			opErr = v.h.viewerSize(v, ev, cols, rows, v.h.now())
		case wire.TypeInput, wire.TypeSignal:
			if v.readOnly {
				if refused.notify(f.Type, v.h.now()) {
					v.send(func(w *wire.Writer) error {
						return w.Error(wire.CodeForbidden, "this viewer is read-only: input, resize and signals are refused")
					})
				}
				continue
			}
			if f.Type == wire.TypeSignal {
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
		case wire.TypeLane, wire.TypeLaneOff:
			if !v.laneFrame(f) {
				return
			}
		case wire.TypeLaneIn:
			if !v.laneIn() { // viewer_lanein.go
				return
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
// ping interval plus the pong timeout, judged only while the server's own
// loop runs on time (liveness.Pinger: a server that was stopped has not
// read the answers waiting in its sockets). It pings only when the
// connection is free: a viewer whose socket is full is not answering
// either.
func (v *viewer) pinger() {
	judge := liveness.New(liveness.Config{Interval: v.opts.PingInterval, Timeout: v.opts.PongTimeout}, v.h.now())
	t := time.NewTimer(judge.Step())
	defer t.Stop()
	var seq uint64
	for {
		select {
		case <-v.gone:
			return
		case <-t.C:
		}
		now := v.h.now()
		verdict := judge.Wake(now, v.born.Add(time.Duration(v.lastHeard.Load())))
		t.Reset(judge.Step())
		switch verdict.Action {
		case liveness.Drop:
			v.h.log.Info("dropping a viewer that stopped answering", "silent", verdict.Silent.Round(time.Second))
			v.leave()
			return
		case liveness.Wait:
			continue
		}
		if verdict.Restarted {
			v.h.log.Debug("the server woke late; the viewer's silence counts from now", "late", verdict.Late.Round(time.Millisecond))
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
