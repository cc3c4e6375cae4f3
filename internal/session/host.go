// Package session is the server's side of one session: the connection to
// its holder, the fan-out of its output to any number of viewers, and what
// the server knows of its state.
//
// Fan-out never waits for a viewer. The host keeps the session's end offset
// and a small window of recent output in memory; each viewer is a goroutine
// with its own position that copies from that window, or from the output log
// on disk when it has fallen behind the window. A slow viewer therefore costs
// only its own position: it cannot slow the child, the holder or another
// viewer, and when it catches up it is live again. Output the log's retention
// has dropped is reported to the viewer as a gap.
package session

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/session/window"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// Host is one session as the server sees it. Its methods are safe for
// concurrent use.
//
// Its state is in parts, each with the file that keeps it: the viewers
// attached (room, room.go), the session's size (sizing, sizing.go), the
// terminal questions (questionState, questions.go), the one viewer whose lane
// the holder runs (laneSlot, viewer_laneowner.go), what the holder
// reports besides output (holderReports, holderconn.go), and the screen
// model (model.go). What no part owns is the output stream and the
// connection to the holder, here.
//
// Locks, and the order they are taken in: a lock may be held while taking
// one to its right, never one to its left.
//
//	questionState.input → Host.mu → questionState.mu
//	                      Host.mu → laneSlot.mu
//	                      Host.mu → releaser.mu (idleMemory, output.go)
//	questionState.input → holderConn.slot (Input writes the answer it accepted)
//	viewerLane.mu       → holderConn.slot (openLane hands the terminal over)
//
// The others are taken with no lock held and hold none: viewer.wmu (a
// viewer's frames), model.mu (the screen model; its callbacks take no
// lock), shellState.mu, fgAsks.mu. Host.mu is never held across a write
// to a viewer or to the holder.
type Host struct {
	ID  string
	dir string
	log *slog.Logger
	now func() time.Time // the clock (Config.Now)
	// onEnd is called once, from the host's own goroutine, when the session
	// ends (exited, closed or interrupted).
	onEnd func(wire.Exit)
	meter *Meter // the server's totals (meter.go); never nil
	olog  logView

	mu      sync.Mutex     // guards the fields below, and room and size
	end     uint64         // offset after the last byte received
	win     *window.Window // recent output, ending at end (or before it, once ended)
	changed chan struct{}  // closed and replaced when end, exit or what a viewer is told changes (wakeLocked)
	pid     int
	// holderVersion is the protocol version the holder last welcomed
	// with: a holder of an older build, left running by an upgrade.
	holderVersion int
	exit          *wire.Exit    // set once the session has ended
	up            *holderConn   // nil while disconnected
	ended         chan struct{} // closed when exit is set
	closing       bool          // a Close was sent: the end is on purpose
	health        holderHealth  // whether the holder answers (watchHolder)

	// For the server's policies (activity.go), also guarded by mu.
	closeReason string   // why, when the server closed it on its own (SetCloseReason)
	usage       activity // use and viewers

	room    room          // the viewers attached (room.go)
	size    sizing        // the session's size and its policy (sizing.go)
	reports holderReports // log state, linger, term mode (holderconn.go)
	cwdT    cwdTracker    // the working directory (cwd.go)
	model   *model        // the screen model, once started (nil again after CatchUp)

	q      questionState // terminal questions and the input they order (questions.go); its own locks
	lanes  laneSlot      // whose lane the holder runs (viewer_laneowner.go); its own lock
	shell  shellState    // the shell's marks (shell.go); its own lock
	counts hostCounts    // this session's share of the meter (meter.go); atomic
	closer hostCloser    // Close's state (below)
}

// holderHealth is whether the holder answers. Guarded by Host.mu.
type holderHealth struct {
	timeout time.Duration // how long the holder has to answer and to take a write; fixed
	// unresponsive is when the holder was judged not to answer (zero
	// while it answers; watchHolder).
	unresponsive time.Time
}

// hostCloser is what Close does once, and what it waits for.
type hostCloser struct {
	closed chan struct{} // closed by Close
	once   sync.Once
	// shut is set (under Host.mu) by Close: from then on no connection to
	// the holder is made or kept. readers counts the goroutines reading
	// the holder's stream (readHolder, and its reconnect), which Close
	// waits for; Add only under Host.mu while shut is false.
	shut    bool
	readers sync.WaitGroup
}

// logView is the read-only view of the session's output log, for viewers
// behind the window; opened at its first use.
type logView struct {
	once sync.Once
	log  *outlog.Log
	err  error
}

// Config is what a Host needs to reach its holder.
type Config struct {
	ID  string
	Dir string // the session directory
	Log *slog.Logger
	// OnEnd is called once when the session ends.
	OnEnd func(wire.Exit)
	// OnCwd is called when the session's working directory changes.
	OnCwd func(dir string)
	// Meter, when set, is added to as the host carries bytes and resyncs
	// viewers (meter.go); hosts may share one.
	Meter *Meter
	// HolderTimeout is how long the holder has to answer a ping (it is
	// pinged every half of it) before the session is shown unresponsive,
	// and to take a write before the write fails (0:
	// DefaultHolderTimeout).
	HolderTimeout time.Duration
	// Now is the clock the host's decisions read (nil: time.Now): when a
	// viewer is slow, when a question expires, when the session was last
	// used. Waits and I/O deadlines run on real time whatever it says.
	Now func() time.Time
}

// closedReason is the reason of a session closed on purpose, when the
// server gave none of its own.
const closedReason = "the session was closed (termkeep kill, or closed in the browser)"

// ErrEnded is returned by operations on a session that has ended.
var ErrEnded = errors.New("session: session has ended")

// ErrDisconnected is returned when the holder is not connected right now.
var ErrDisconnected = errors.New("session: the session's holder is not connected")

// New returns a Host; call Connect to reach the holder.
func New(cfg Config) *Host {
	lg := cfg.Log
	if lg == nil {
		lg = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	meter := cfg.Meter
	if meter == nil {
		meter = new(Meter)
	}
	h := &Host{
		ID: cfg.ID, dir: cfg.Dir, log: lg.With("session", cfg.ID), onEnd: cfg.OnEnd, meter: meter,
		win:     window.New(recentCap),
		changed: make(chan struct{}), ended: make(chan struct{}),
		now: cfg.Now,
	}
	if h.now == nil {
		h.now = time.Now
	}
	h.usage = newActivity(h.now())
	h.health.timeout = cmp.Or(max(cfg.HolderTimeout, 0), DefaultHolderTimeout)
	h.closer.closed = make(chan struct{})
	h.cwdT.notify = cfg.OnCwd
	return h
}

// Ended returns a channel closed once the session has ended.
func (h *Host) Ended() <-chan struct{} { return h.ended }

// Exit returns how the session ended, or nil while it runs.
func (h *Host) Exit() *wire.Exit {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.exit
}

// Info is a point-in-time view of the host.
type Info struct {
	End        uint64
	Cols, Rows uint16
	Pid        int
	Connected  bool
	// LogStopped is set while the holder cannot log the output.
	LogStopped *wire.LogState
	// Lingering is set while the child has exited and the holder reads
	// what the processes it left behind print (wire.TypeLinger).
	Lingering *wire.Linger
	// UnresponsiveSince is set while the session runs and its holder does
	// not answer: when it was judged so.
	UnresponsiveSince time.Time
	// HolderProtocol is the protocol version of the holder (0 before one
	// welcomed the host).
	HolderProtocol int
	// TermMode is the pty's input mode as its holder last reported it
	// (wire.TypeTermMode); nil while unknown: a holder before version 7,
	// or none reported yet.
	TermMode *wire.TermMode
}

// Info returns the host's current view.
func (h *Host) Info() Info {
	h.mu.Lock()
	defer h.mu.Unlock()
	info := Info{End: h.end, Cols: h.size.cols, Rows: h.size.rows, Pid: h.pid, Connected: h.up != nil, HolderProtocol: h.holderVersion}
	if h.reports.log.Stopped && h.exit == nil {
		st := h.reports.log
		info.LogStopped = &st
	}
	if h.reports.linger != nil && h.exit == nil {
		l := *h.reports.linger
		info.Lingering = &l
	}
	if h.exit == nil {
		info.UnresponsiveSince = h.health.unresponsive
		if h.reports.mode != nil {
			m := *h.reports.mode
			info.TermMode = &m
		}
	}
	return info
}

// outlog opens the read-only log view lazily.
func (h *Host) outlog() (*outlog.Log, error) {
	v := &h.olog
	v.once.Do(func() {
		v.log, v.err = outlog.Open(filepath.Join(h.dir, sessiondir.LogDir), outlog.Options{ReadOnly: true})
	})
	return v.log, v.err
}

// Close releases the host's files, writing a last screen checkpoint so the
// next server starts from it. It does not end the session. It returns once
// the host's reader has stopped: an end the holder reported before Close
// has been handed to OnEnd, and no connection to the holder is made again,
// so a stopping server can close its registry after its hosts.
func (h *Host) Close() {
	h.closer.once.Do(func() {
		h.mu.Lock()
		h.closer.shut = true
		up := h.up
		h.mu.Unlock()
		if up != nil {
			up.c.Close()
		}
		close(h.closer.closed)
		h.closer.readers.Wait()
		h.mu.Lock()
		m := h.model
		h.mu.Unlock()
		if m != nil {
			m.checkpoint(true)
			m.stop()
			// Its last writes land before Close returns: a session
			// removed next must not get a checkpoint back.
			<-m.done
		}
		if l, err := h.outlog(); err == nil && l != nil {
			l.Close()
		}
	})
}

// MarkEnded records an end the server decided on (e.g. a session whose
// holder was found gone at start).
func (h *Host) MarkEnded(e wire.Exit) {
	// The registry does not keep the end offset: the log does.
	if l, err := h.outlog(); err == nil && l.Refresh() == nil {
		e.End = max(e.End, l.End())
	}
	h.finish(e)
}

func (h *Host) finish(e wire.Exit) {
	h.mu.Lock()
	if h.exit != nil {
		h.mu.Unlock()
		return
	}
	if e.End < h.end {
		e.End = h.end
	}
	if h.closing && e.State != "closed" {
		// Asked to close, it ended otherwise: its holder died (killed
		// when it did not answer) or its program exited meanwhile. The
		// user's close is what they asked for.
		e.State, e.Reason, e.Cause = "closed", cmp.Or(h.closeReason, closedReason), ""
	}
	if e.State == "closed" && e.Reason == "" {
		e.Reason = h.closeReason // closed by the server's close signal to the holder (no Exit frame): the reason is ours
	}
	// Bytes the holder logged after the last frame we saw are on disk; the
	// viewers read them from there.
	h.end = e.End
	h.exit = &e
	h.up = nil
	h.wakeLocked()
	close(h.ended)
	h.mu.Unlock()
	if h.onEnd != nil {
		h.onEnd(e)
	}
}

// Input sends bytes to the session's pty.
func (h *Host) Input(p []byte) error {
	h.stampInput()
	err := h.toHolder(func(w *wire.Writer) error { return w.Input(p) })
	if err == nil {
		h.counts.inBytes.Add(uint64(len(p)))
		h.meter.InputBytes.Add(uint64(len(p)))
	}
	return err
}

// Resize sets the session's pty size.
func (h *Host) Resize(cols, rows uint16) error {
	if err := wire.CheckSize(cols, rows); err != nil {
		return err
	}
	err := h.toHolder(func(w *wire.Writer) error { return w.Resize(cols, rows) })
	if err == nil {
		h.mu.Lock()
		h.size.reqCols, h.size.reqRows = cols, rows
		h.mu.Unlock()
	}
	return err
}

// Signal sends a signal to the session's foreground process group.
func (h *Host) Signal(sig uint8) error {
	h.stampInput()
	return h.toHolder(func(w *wire.Writer) error { return w.Signal(sig) })
}

// SignalCommand sends a signal to the pty's foreground process group
// only: the command the session's shell runs, never the shell itself.
func (h *Host) SignalCommand(sig uint8) error {
	h.mu.Lock()
	up := h.up
	h.mu.Unlock()
	if up != nil && !wire.HolderAccepts(up.version, wire.TypeSignalFg) {
		return fmt.Errorf("session: the session's holder (protocol %d) cannot signal its command alone; it can from protocol %d", up.version, wire.Version)
	}
	h.stampInput()
	return h.toHolder(func(w *wire.Writer) error { return w.SignalFg(sig) })
}

// Kill ends the session on purpose: SIGHUP, then SIGKILL after grace. It
// returns once the holder has been asked; wait on Ended for the end.
func (h *Host) Kill(grace time.Duration) error {
	h.mu.Lock()
	h.closing = true
	h.mu.Unlock()
	return h.toHolder(func(w *wire.Writer) error { return w.Close(uint32(grace.Milliseconds())) })
}

func (h *Host) toHolder(fn func(*wire.Writer) error) error {
	h.mu.Lock()
	up, exit := h.up, h.exit
	h.mu.Unlock()
	if exit != nil {
		return ErrEnded
	}
	if up == nil {
		return ErrDisconnected
	}
	if err := up.send(fn); err != nil {
		if errors.Is(err, ErrHolderStuck) {
			return err // already a sentence for the user
		}
		return fmt.Errorf("session: write to holder: %w", err)
	}
	return nil
}

// Resyncs counts viewers that fell behind and were skipped to the present.
func (h *Host) Resyncs() uint64 { return h.counts.resyncs.Load() }

// wakeLocked wakes everyone waiting on the host's changed channel (the
// viewers' write loops, the model). The caller holds h.mu.
func (h *Host) wakeLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}
