// Package attach is `termkeep attach`: one terminal attached to a
// session, drawing its output, sending what is typed and following the
// terminal's size, through lost connections and server restarts.
//
// Its decisions are pure types, each with its table of traces: where a
// connection resumes (resume), when the terminal is offered for a lane
// and when attach may write to it (laneGate, laneConds), which keys wait
// for a connection (inputPath), and what reaches the terminal at the
// start, on a reconnect and at the end (package outerterm). The attacher
// type here is the shell around them: a goroutine reading the terminal,
// one reading each connection, and the attach loop. Over a link that may
// go silent (ssh) it pings (Config.Keepalive, liveness.Pinger), and an
// Opener that needs the user (ssh asking for a password) borrows the
// terminal (lend.go).
package attach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/term"

	"termkeep/internal/client"
	"termkeep/internal/outerterm"
	"termkeep/internal/predict"
	"termkeep/internal/session/liveness"
	"termkeep/internal/shellmark"
	"termkeep/internal/wire"
)

// Opener opens a stream to the session for hello h, retrying while no
// server answers: it calls notify with why when it starts to, and when
// why changes (the server was shut down, and no other is started).
// Errors the server states (no such session, a refused request) end the
// attach.
type Opener func(ctx context.Context, h wire.Hello, notify func(why string)) (*client.Stream, error)

// Config is one attach.
type Config struct {
	Ref     string   // the session, as the user named it
	In, Out *os.File // the terminal
	Open    Opener
	// DetachKey is the byte that detaches, or -1 for none.
	DetachKey int
	// Scrollback is how many lines of history the first snapshot draws.
	Scrollback int
	// Name is how the session's other viewers are shown this one.
	Name string
	// ReadOnly watches; IgnoreSize never changes the session's size;
	// AltScreen draws in the terminal's alternate screen; DetachOthers
	// detaches the session's other terminals on arrival.
	ReadOnly, IgnoreSize, AltScreen, DetachOthers bool
	// Lanes is TERMKEEP_ECHO_LANE: "off" takes no lane, "output" no
	// input lane (A/B measurements).
	Lanes string
	// Keepalive, when its Interval is set, pings the server every
	// Interval and takes a connection silent for Interval+Timeout for
	// lost: a relay over ssh, whose link may drop everything without a
	// word. (A local socket says when it ends.)
	Keepalive liveness.Config
	// Predict is predictive echo (predict.go): Never, Always, or Auto
	// (over a pinged link whose round trip is above the threshold).
	Predict predict.Setting
}

// ExitError is the session's end, carried out as attach's status.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("the session ended with status %d", e.Code) }

// frameEvery is how often attach paints a session drawn from its screen
// model while output flows: every paint writes the whole terminal.
const frameEvery = 16 * time.Millisecond

// noticeFor is how long a notice of an event stays in the title.
const noticeFor = 3 * time.Second

// attacher is one attach's state. The attach loop owns it; while a
// connection runs, its reader goroutine owns res and the fields marked
// "reader", and hands them back when it ends (its result).
type attacher struct {
	cfg        Config
	cols, rows uint16 // the terminal's size, as the server takes it

	tin  io.Reader
	tout io.Writer
	rt   *rawTerm // attach's own descriptor of its terminal, or nil
	// cooked is the terminal's mode before attach made it raw (nil: not
	// a terminal), for lending it (lend.go).
	cooked *term.State
	conds  laneConds

	wmu        sync.Mutex // guards the fields below and every write to tout
	ot         *outerterm.Term
	gate       laneGate
	stream     *client.Stream // the current connection
	paintTimer *time.Timer    // a paint from the model is due
	noteTimer  *time.Timer    // a notice of an event goes
	leaving    bool           // attach is ending: no more offers
	idle       chan struct{}  // closed when the gate is idle again (quiesce)

	res      resume
	typed    *inputPath
	detached *detacher

	// reader: as last said.
	logStopped  bool   // the log stopped
	holderStuck bool   // the session's holder does not answer
	holder      string // who holds the session's size (size.go)

	// heard is when the current connection's last frame came, as time
	// since began (monotonic): the keepalive's measure. drawing is set
	// while the reader acts on a frame: a terminal slow to take what is
	// drawn holds the reader up, which is no silence of the server's.
	began   time.Time
	heard   atomic.Int64
	drawing atomic.Bool
	pinging atomic.Bool // a ping is being written

	lost       bool   // the connection was lost: say when it is back
	redrawNext bool   // stopped and continued: reconnect from a snapshot
	farewell   string // the line attach's end writes

	// Predictive echo (predict.go), under wmu: pred is nil when attach
	// does not predict; termMode is the pty's as last said (nil:
	// unknown); pingN and pingAt are the ping whose pong is awaited; the
	// reader feeds marks (under wmu).
	pred      *predict.Predictor
	predTimer *time.Timer
	termMode  *predict.TermMode
	shell     predict.Shell     // as the marks say (marks)
	marks     shellmark.Scanner // the shell's integration marks in the output
	pingN     uint64
	pingAt    time.Time
}

// Run attaches cfg.In and cfg.Out to the session until a detach, the
// session's end (an *ExitError with its status), the terminal's end, or
// ctx's.
func Run(ctx context.Context, cfg Config) error {
	c := &attacher{cfg: cfg, tin: cfg.In, tout: cfg.Out, res: newResume(), began: time.Now()}
	fd := int(cfg.In.Fd())
	if term.IsTerminal(fd) {
		old, err := term.MakeRaw(fd)
		if err != nil {
			return fmt.Errorf("put the terminal in raw mode: %w", err)
		}
		defer term.Restore(fd, old)
		c.cooked = old
	}
	c.size()
	// Keystrokes and output go through a non-blocking descriptor of the
	// terminal outside the runtime's poller where there is one
	// (rawterm_linux.go): in the poller, each key and each echo a lane
	// writes wakes attach.
	if c.rt = openRawTerm(cfg.In, cfg.Out); c.rt != nil {
		defer c.rt.Close()
		defer c.rt.resume() // attach ends: its reader is stopped no more
		c.tin, c.tout = c.rt, c.rt
	}
	c.ot = outerterm.New(int(c.cols), int(c.rows), cfg.AltScreen)
	if predicts(cfg) {
		// A lane would draw on the terminal behind the prediction's back.
		c.cfg.Lanes, cfg.Lanes = "off", "off"
		c.pred = predict.New(predict.Options{Setting: cfg.Predict})
		c.ot.Track()
	}
	c.conds = newLaneConds(cfg, c.rt)
	if cfg.ReadOnly {
		// The user's terminal applies a clipboard write as it would any
		// program's; a read-only attach may change nothing of its user's.
		c.ot.DropClipboard()
	}
	c.paint(c.ot.Begin)
	defer c.end()

	// SIGHUP (the terminal went away) and SIGTERM end attach cleanly, so the
	// deferred resets and Restore run; the session is untouched.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGWINCH, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGCONT)
	defer signal.Stop(sigs)

	c.typed = newInputPath(nil)
	if c.pred != nil {
		c.typed.typed = c.keyTyped
	}
	c.detached = newDetacher()
	go readInput(c.tin, cfg.DetachKey, c.typed, c.detached)
	return c.loop(ctx, sigs)
}

// size takes the terminal's size: the server takes 1..wire.MaxDim each;
// a larger terminal shows the session in its top-left corner.
func (c *attacher) size() {
	if w, h, err := term.GetSize(int(c.cfg.Out.Fd())); err == nil && w > 0 && h > 0 {
		c.cols, c.rows = uint16(min(w, wire.MaxDim)), uint16(min(h, wire.MaxDim))
	}
}

// end leaves the terminal as it was (the deferred last step of Run).
func (c *attacher) end() {
	c.wmu.Lock()
	if c.noteTimer != nil {
		c.noteTimer.Stop()
	}
	if c.paintTimer != nil {
		c.paintTimer.Stop()
	}
	if b := c.stopPredicting(); len(b) > 0 {
		c.tout.Write(b)
	}
	c.wmu.Unlock()
	c.paint(c.ot.End)
	if c.farewell != "" {
		c.paint(func() []byte { return []byte("[termkeep: " + c.farewell + "]\r\n") })
	}
}

// paint writes what fn returns (called under wmu) to the terminal.
func (c *attacher) paint(fn func() []byte) error { return c.paintAs(fn, false) }

// paintOutput is paint for the session's output: the prediction drawn
// over the terminal is checked against it.
func (c *attacher) paintOutput(fn func() []byte) error { return c.paintAs(fn, true) }

func (c *attacher) paintAs(fn func() []byte, output bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b := c.predicted(fn, output)
	if len(b) == 0 {
		return nil
	}
	if _, err := c.tout.Write(b); err != nil {
		return terminalGone{err}
	}
	return nil
}

// own writes attach's own bytes: now while no lane may write to the
// terminal, else once the lane has ended (it is asked for back).
func (c *attacher) own(fn func() []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	now, withdraw := c.gate.own(c.predicted(fn, false))
	if len(now) > 0 {
		c.tout.Write(now)
	}
	if withdraw && c.stream != nil {
		c.stream.WithdrawLane()
	}
}

// notice shows a state in the terminal's title until another replaces it.
func (c *attacher) notice(format string, args ...any) {
	msg := fmt.Sprintf("termkeep: "+format, args...)
	c.own(func() []byte { return c.ot.Notice(msg) })
}

// passing shows an event for noticeFor.
func (c *attacher) passing(format string, args ...any) {
	c.notice(format, args...)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.noteTimer != nil {
		c.noteTimer.Stop()
	}
	c.noteTimer = time.AfterFunc(noticeFor, func() { c.own(c.ot.ClearNote) })
}

// quiesce takes the terminal back from a lane before attach's last
// lines: it asks, and waits a moment for the lane-end, which the
// connection's reader takes.
func (c *attacher) quiesce(s *client.Stream) {
	c.wmu.Lock()
	c.leaving = true
	if c.gate.withdraw() {
		s.WithdrawLane()
	}
	if c.gate.idle() {
		c.wmu.Unlock()
		return
	}
	c.idle = make(chan struct{})
	idle := c.idle
	c.wmu.Unlock()
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}

// dropped says how many bytes typed during a long outage were dropped.
func (c *attacher) dropped() {
	if n := c.typed.takeDropped(); n > 0 {
		c.passing("%d bytes typed while the connection was down for more than %v were dropped", n, keyHold)
	}
}

// result is how a connection ended.
type result struct {
	exit   *wire.Exit
	err    error
	redraw bool // the session left its alternate screen under --alt-screen
	// detachedBy says why another client's attach -d detached this one.
	detachedBy string
}

// loop connects, serves each connection, and decides after each whether
// to connect again.
func (c *attacher) loop(ctx context.Context, sigs <-chan os.Signal) error {
	first := true
	var askFailed error
	for {
		s, err := c.connectOrDetach(ctx, first)
		if nt := (*NeedsTerminal)(nil); errors.As(err, &nt) {
			var stop error
			askFailed, stop = c.lend(ctx, nt, askFailed)
			if stop == errLeft {
				return nil
			}
			if stop != nil {
				return stop
			}
			continue
		}
		if err != nil {
			return err
		}
		askFailed = nil
		if s == nil && c.farewell != "" {
			return nil // detached while connecting
		}
		if s == nil {
			continue // connect again, for a snapshot
		}
		first = false
		r, stop, err := c.serve(ctx, s, sigs)
		if stop {
			return err
		}
		if again, err := c.ended(s, r); !again {
			return err
		}
	}
}

// connectOrDetach is connect, given up when the detach key is pressed
// meanwhile (a reconnect may wait long for a server or a network): then
// it returns nil with the farewell set.
func (c *attacher) connectOrDetach(ctx context.Context, first bool) (*client.Stream, error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-c.detached.ch:
			cancel()
		case <-cctx.Done():
		}
	}()
	s, err := c.connect(cctx, first)
	if err != nil && ctx.Err() == nil && cctx.Err() != nil {
		c.farewell = "detached from " + c.cfg.Ref
		return nil, nil
	}
	return s, err
}

// connect opens the next connection from where the terminal is; nil
// without an error asks for another (the server cannot answer a claim).
func (c *attacher) connect(ctx context.Context, first bool) (*client.Stream, error) {
	from, token, claim := c.res.connecting(laneToken())
	h := wire.Hello{
		Role: wire.RoleViewer, From: from, Cols: c.cols, Rows: c.rows, Scrollback: c.cfg.Scrollback,
		ReadOnly: c.cfg.ReadOnly, IgnoreSize: c.cfg.IgnoreSize, Name: c.cfg.Name, ScreenFirst: true,
		LaneToken: token, Claim: claim,
		// Taken on the first connection only.
		DetachOthers: first && c.cfg.DetachOthers,
		Fit:          first && !c.cfg.ReadOnly && !c.cfg.IgnoreSize,
	}
	s, err := c.cfg.Open(ctx, h, func(why string) {
		c.lost = true
		c.notice("%s", why)
	})
	if err != nil {
		return nil, err
	}
	if c.res.welcomed(s.Welcome.Version) {
		s.Close()
		return nil, nil
	}
	if c.lost {
		c.lost = false
		c.passing("reconnected")
	}
	c.wmu.Lock()
	c.stream = s
	c.wmu.Unlock()
	c.paint(func() []byte { return c.ot.Session(int(s.Welcome.Cols), int(s.Welcome.Rows)) })
	c.typed.connected(s)
	c.dropped()
	return s, nil
}

// serve runs one connection: its reader, and the loop's input, signals
// and detach. stop says attach ends, with err.
func (c *attacher) serve(ctx context.Context, s *client.Stream, sigs <-chan os.Signal) (r result, stop bool, err error) {
	done := make(chan result, 1)
	go func() { done <- c.read(s) }()
	input := c.typed.ch
	var tick <-chan time.Time
	var alive *liveness.Pinger
	if c.cfg.Keepalive.Interval > 0 {
		c.heard.Store(int64(time.Since(c.began)))
		alive = liveness.New(c.cfg.Keepalive, time.Now())
		t := time.NewTicker(alive.Step())
		defer t.Stop()
		tick = t.C
	}
	var pings uint64
	for {
		select {
		case now := <-tick:
			if c.drawing.Load() {
				c.heard.Store(int64(time.Since(c.began)))
			}
			switch alive.Wake(now, c.began.Add(time.Duration(c.heard.Load()))).Action {
			case liveness.Ping:
				// Written aside: a link that takes nothing may block the
				// write, and the loop must still be free to give it up.
				if c.pinging.CompareAndSwap(false, true) {
					pings++
					c.pinged(pings)
					go func(n uint64) { s.Ping(n); c.pinging.Store(false) }(pings)
				}
			case liveness.Drop:
				s.Close() // silent too long: the reader's end reconnects
			}
		case k, ok := <-input:
			if !ok {
				// A terminal in raw mode ends only when it hangs up
				// (EIO): end as on SIGHUP, which a terminal that was
				// not the controlling one never sends.
				return c.leave(s, "")
			}
			c.typed.queued(s, k)
			c.dropped()
		case sig := <-sigs:
			switch sig {
			case syscall.SIGWINCH:
				c.resized(s)
			case syscall.SIGCONT:
				// Stopped, then continued (kill -STOP, fg): the shell
				// had the terminal meanwhile, in its own modes, and
				// drew on it. Raw again, and the screen drawn anew.
				if fd := int(c.cfg.In.Fd()); term.IsTerminal(fd) {
					term.MakeRaw(fd)
				}
				c.redrawNext = true
				s.Close() // the reader's end reconnects
			default:
				return c.leave(s, "")
			}
		case <-c.detached.ch:
			return c.leave(s, "detached from "+c.cfg.Ref)
		case <-ctx.Done():
			return c.leave(s, "")
		case r := <-done:
			return r, false, nil
		}
	}
}

// leave ends attach on this connection, saying farewell if it is set.
func (c *attacher) leave(s *client.Stream, farewell string) (result, bool, error) {
	c.quiesce(s)
	s.Close()
	c.farewell = farewell
	return result{}, true, nil
}

// resized follows the terminal's new size.
func (c *attacher) resized(s *client.Stream) {
	c.size()
	c.own(func() []byte { return c.ot.Resize(int(c.cols), int(c.rows)) })
	if c.cfg.IgnoreSize || c.cfg.ReadOnly {
		s.Resize(c.cols, c.rows) // says its size, takes nothing
	} else {
		// Resizing the terminal under attach takes the session's size
		// (the policy permitting).
		s.Fit(c.cols, c.rows)
	}
}

// ended takes a connection's end: whether to connect again, or how
// attach ends.
func (c *attacher) ended(s *client.Stream, r result) (again bool, err error) {
	c.typed.connected(nil)
	s.Close()
	c.wmu.Lock()
	c.stream = nil
	write, claim, resume := c.gate.lost()
	c.ownAgain(write, resume)
	switch {
	case errors.As(r.err, new(terminalGone)):
		return false, nil // the terminal hung up
	case r.exit != nil:
		var code int
		c.farewell, code = sessionEnded(c.cfg.Ref, r.exit)
		return false, &ExitError{Code: code}
	case r.detachedBy != "":
		c.farewell = r.detachedBy
		return false, nil
	case r.redraw || c.redrawNext:
		// A fresh snapshot draws the session's normal screen again,
		// where the alternate screen's contents were or the shell drew
		// while attach was stopped.
		c.res.redraw()
		c.redrawNext = false
	case errors.Is(r.err, wire.ErrMalformed):
		return false, r.err
	default:
		c.res.lost(!claim)
	}
	return true, nil
}

// laneToken draws a token for a connection's lanes: random, so that no
// other attach's connection, before or after a server restart, has it.
func laneToken() uint64 {
	for {
		if t := rand.Uint64(); t != 0 {
			return t
		}
	}
}
