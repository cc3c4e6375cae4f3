package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"termkeep/internal/client"
	"termkeep/internal/keys"
	"termkeep/internal/outerterm"
	"termkeep/internal/wire"
)

func newAttachCmd(g *globals) *cobra.Command {
	var (
		detachKey  string
		scrollback int
		readOnly   bool
		altScreen  bool
		detach     bool
		ignoreSize bool
	)
	cmd := &cobra.Command{
		Use:     "attach SESSION",
		Aliases: []string{"a", "attach-session"},
		Short:   "Attach this terminal to a session",
		Long: `Attach this terminal to a session: its screen as it is now (with up to
--scrollback lines of history above it), then live output; what you type goes
to it, and it follows this terminal's size.
Detach with Ctrl-\ (--detach-key; "none" to disable): the session keeps running.
A dropped connection is reopened by itself and continues where it left off.
When the session ends, attach says so and exits with the session's status.

The session draws on this terminal's normal screen, so its history goes into
the terminal's own scrollback; what was on the screen before scrolls up into
it. --alt-screen draws in the alternate screen instead, as tmux does, and
brings the earlier screen back on detach.

The session has one size. Attaching, and resizing this terminal, makes it
this terminal's (under the default size policy, latest; see termkeep
resize); when another viewer takes it, the session is drawn at its own size:
clipped when this terminal is smaller, the rest marked with dots when it is
larger. --ignore-size watches without ever changing the size. Either way, a detach, an exit or a
lost connection returns the terminal to its default modes (cursor keys,
mouse, bracketed paste, cursor, scroll region, colours), whatever the
session's program switched on. attach needs a terminal; scripts use
capture, send and wait.`,
		Args: exactArgs(1, "a SESSION (id or name)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, ok := parseDetachKey(detachKey)
			if !ok {
				return usageErr("--detach-key %q is not a key like C-\\ or C-a (or none)", detachKey)
			}
			if !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
				c, err := g.connect(cmd.Context())
				if err != nil {
					return err
				}
				if _, err := c.Get(cmd.Context(), args[0]); err != nil {
					return apiErr(err)
				}
				return usageErr("attach needs a terminal: its standard input and output are not both one (from a script, use capture, send and wait)")
			}
			if altScreen {
				scrollback = 0 // the alternate screen has no scrollback
			}
			if detach && readOnly {
				return usageErr("-d detaches the other terminals to take the session over; a --read-only viewer takes nothing over")
			}
			// No round trip to ask whether a server answers: the attach
			// itself finds out, and starts one if need be (follow.go).
			c, err := g.uncheckedClient()
			if err != nil {
				return err
			}
			f := &follower{
				g: g, c: c, unchecked: true, ref: args[0], role: wire.RoleViewer, off: wire.FromSnapshot, scrollback: scrollback, readOnly: readOnly,
				detachOthers: detach, fit: !readOnly && !ignoreSize, ignoreSize: ignoreSize, name: "attach " + ttyName(os.Stdin),
				screenFirst: true,
			}
			return attach(cmd.Context(), f, key, altScreen)
		},
	}
	cmd.Flags().StringVar(&detachKey, "detach-key", `C-\`, "key that detaches (e.g. C-\\, C-a, none)")
	cmd.Flags().IntVar(&scrollback, "scrollback", 1000, "lines of history to draw above the screen when attaching")
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "watch only: never type into the session or resize it")
	cmd.Flags().BoolVarP(&detach, "detach-others", "d", false, "detach the session's other terminals (attach, not browsers), as tmux's attach -d")
	cmd.Flags().BoolVar(&ignoreSize, "ignore-size", false, "never change the session's size: draw it at its own (as tmux's attach -f ignore-size)")
	cmd.Flags().BoolVar(&altScreen, "alt-screen", false, "draw in the terminal's alternate screen and bring the earlier screen back on detach (no history in the terminal's scrollback)")
	return withTarget(cmd)
}

// parseDetachKey returns the byte of a control key, or -1 for none.
func parseDetachKey(s string) (int, bool) {
	if strings.EqualFold(s, "none") || s == "" {
		return -1, true
	}
	if b, err := keys.Bytes(s); err == nil && len(b) == 1 && (b[0] < 0x20 || b[0] == 0x7f) {
		return int(b[0]), true
	}
	return 0, false
}

// attach runs the interactive loop: one goroutine reads the local terminal
// for the whole attach, one per connection reads the session, and this one
// writes input and resizes to the current connection.
func attach(ctx context.Context, f *follower, detachKey int, altScreen bool) error {
	in, out := os.Stdin, os.Stdout
	fd := int(in.Fd())
	if term.IsTerminal(fd) {
		old, err := term.MakeRaw(fd)
		if err != nil {
			return fmt.Errorf("put the terminal in raw mode: %w", err)
		}
		defer term.Restore(fd, old)
	}
	size := func() {
		if c, r, err := term.GetSize(int(out.Fd())); err == nil && c > 0 && r > 0 {
			// The server takes 1..wire.MaxDim each; a wider terminal
			// shows the session in its top-left corner.
			f.cols, f.rows = uint16(min(c, wire.MaxDim)), uint16(min(r, wire.MaxDim))
		}
	}
	size()
	// Keystrokes and output go through a non-blocking descriptor of the
	// terminal outside the runtime's poller where there is one
	// (rawterm_linux.go): in the poller, each key and each echo a lane
	// writes wakes attach.
	var tin io.Reader = in
	var tout io.Writer = out
	laneFD := -1    // what a lane reads and writes: the terminal's descriptor
	var rt *rawTerm // its reader stops while a holder reads the terminal
	// The switch for A/B runs (docs/architecture.md, Echo through attach):
	// off, no lanes; output, the output lane without the input lane.
	lanesOff := os.Getenv("TERMKEEP_ECHO_LANE") == "off"
	inputOff := lanesOff || os.Getenv("TERMKEEP_ECHO_LANE") == "output"
	if rt = openRawTerm(in, out); rt != nil {
		defer rt.Close()
		defer rt.resume() // attach ends: its reader is stopped no more
		tin, tout, laneFD = rt, rt, rt.fd
	}
	// A detach key that is plain typing would reach the pty through an
	// input lane: attach never stops reading for one.
	keyTyped := detachKey >= 0 && wire.PlainTyping([]byte{byte(detachKey)})

	// Every byte for the terminal passes through ot (package outerterm),
	// under wmu: the session's output from the reader goroutine, notices
	// and the final resets from this one.
	ot := outerterm.New(int(f.cols), int(f.rows), altScreen)
	var wmu sync.Mutex
	var paintTimer *time.Timer // a paint from the model is due (under wmu)
	paint := func(fn func() []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		b := fn()
		if len(b) == 0 {
			return nil
		}
		if _, err := tout.Write(b); err != nil {
			return terminalGone{err}
		}
		return nil
	}
	// attach's own lines wait while a lane may write to the terminal
	// (attach_lane.go); they ask the server for it back.
	var gate laneGate         // under wmu
	var stream *client.Stream // the current connection, under wmu
	own := func(fn func() []byte) {
		wmu.Lock()
		defer wmu.Unlock()
		now, withdraw := gate.own(fn())
		if len(now) > 0 {
			tout.Write(now)
		}
		if withdraw && stream != nil {
			stream.WithdrawLane()
		}
	}
	leaving := false // under wmu: attach is ending; no more offers
	// quiesce takes the terminal back from a lane before attach's last
	// lines: it asks, and waits a moment for the lane-end, which the
	// connection's reader takes.
	quiesce := func(s *client.Stream) {
		wmu.Lock()
		leaving = true
		if gate.withdraw() {
			s.WithdrawLane()
		}
		wmu.Unlock()
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			wmu.Lock()
			idle := gate.idle()
			wmu.Unlock()
			if idle {
				return
			}
		}
	}
	notice := func(format string, args ...any) {
		msg := fmt.Sprintf("termkeep: "+format, args...)
		own(func() []byte { return ot.Notice(msg) })
	}
	// A notice that reports an event, not a state, goes after a while.
	var noteTimer *time.Timer
	passing := func(format string, args ...any) {
		notice(format, args...)
		wmu.Lock()
		defer wmu.Unlock()
		if noteTimer != nil {
			noteTimer.Stop()
		}
		noteTimer = time.AfterFunc(noticeFor, func() { own(ot.ClearNote) })
	}
	paint(ot.Begin)
	farewell := ""
	defer func() {
		wmu.Lock()
		if noteTimer != nil {
			noteTimer.Stop()
		}
		if paintTimer != nil {
			paintTimer.Stop()
		}
		wmu.Unlock()
		paint(ot.End)
		if farewell != "" {
			paint(func() []byte { return []byte("[termkeep: " + farewell + "]\r\n") })
		}
	}()

	// SIGHUP (the terminal went away) and SIGTERM end attach cleanly, so the
	// deferred resets and Restore run; the session is untouched.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGWINCH, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGCONT)
	defer signal.Stop(sigs)

	typed := newInputPath(nil)
	input := typed.ch
	detached := newDetacher()
	go readInput(tin, detachKey, typed, detached)

	logStopped := false  // as last said
	holderStuck := false // as last said: the session's holder does not answer
	holder := ""         // who holds the session's size, as last said (attach_size.go)
	lost := false        // the connection was lost: say when it is back
	redrawNext := false  // attach was stopped and continued: reconnect from a snapshot
	for {
		if f.off < 0 {
			f.claim = 0 // a snapshot draws it all
		}
		f.laneToken = laneToken()
		s, err := f.open(ctx, func() {
			lost = true
			notice("connection lost; reconnecting (Ctrl-\\ detaches)")
		})
		if err != nil {
			return err
		}
		if f.claim != 0 && !wire.LaneClaims(s.Welcome.Version) {
			// A server that cannot say where the lane ended: the
			// screen is drawn anew.
			s.Close()
			f.off, f.claim = wire.FromSnapshot, 0
			continue
		}
		if lost {
			lost = false
			passing("reconnected")
		}
		wmu.Lock()
		stream = s
		wmu.Unlock()
		paint(func() []byte { return ot.Session(int(s.Welcome.Cols), int(s.Welcome.Rows)) })
		typed.connected(s)
		if n := typed.takeDropped(); n > 0 {
			passing("%d bytes typed while the connection was down for more than %v were dropped", n, keyHold)
		}
		// canLane says whether attach may offer its terminal for a lane
		// now (under wmu): a read-write attach drawing the session's bytes
		// as they are, on a server that speaks lanes.
		canLane := func() bool {
			return laneFD >= 0 && !f.readOnly && !altScreen && wire.ViewerLanes(s.Welcome.Version) &&
				!ot.Rendered() && !ot.Redraw && f.off >= 0 && !leaving && !lanesOff
		}
		// canIn says whether attach may stop reading its terminal for an
		// input lane (under wmu).
		canIn := func() bool {
			return rt != nil && !f.readOnly && !altScreen && wire.InputLanes(s.Welcome.Version) &&
				!inputOff && !keyTyped && !leaving && leadsTerminal(rt)
		}
		handed := false // the terminal went with an offer on this connection
		type result struct {
			exit   *wire.Exit
			err    error
			redraw bool // the session left its alternate screen under --alt-screen
			// detachedBy says why another client's attach -d detached this one.
			detachedBy string
		}
		done := make(chan result, 1)
		go func() {
			for {
				fr, err := s.Next()
				if err != nil {
					done <- result{err: err}
					return
				}
				switch fr.Type {
				case wire.TypeOutput:
					off, data, _ := wire.ParseOutput(fr.Payload)
					if err := paint(func() []byte { return ot.Output(data) }); err != nil {
						done <- result{err: err}
						return
					}
					f.advance(off, len(data))
				case wire.TypeSnapshot:
					off, data, _ := wire.ParseOutput(fr.Payload)
					if err := paint(func() []byte { return ot.Snapshot(data) }); err != nil {
						done <- result{err: err}
						return
					}
					f.off = int64(off) // output continues from the snapshot's offset
				case wire.TypeResized:
					// The output from here on was printed at this size.
					_, cols, rows, _ := wire.ParseResized(fr.Payload)
					own(func() []byte { return ot.Session(int(cols), int(rows)) })
				case wire.TypeLaneWritten:
					// A lane wrote these: follow them, do not write them.
					off, data, _ := wire.ParseOutput(fr.Payload)
					wmu.Lock()
					ot.Written(data)
					wmu.Unlock()
					f.advance(off, len(data))
				case wire.TypeLaneEnd:
					f.claim = 0 // the first lane-end answers a claim
					wmu.Lock()
					write, resume := gate.ended()
					for _, b := range write {
						tout.Write(b)
					}
					wmu.Unlock()
					if resume {
						rt.resume()
					}
				case wire.TypeLaneIn:
					// The holder may read the terminal: stop reading it
					// first (outside wmu: the reader may be handing a
					// chunk to the stream), then say so.
					wmu.Lock()
					pause := gate.laneIn(canIn())
					wmu.Unlock()
					if pause {
						rt.pause()
						s.LaneIn()
					}
				case wire.TypeLaneInput:
					// Keys the holder read and did not type: as if read
					// here, then the holder may read on.
					left := typed.take(fr.Payload, detachKey, detached)
					wmu.Lock()
					again := gate.handBack(!left && !leaving)
					wmu.Unlock()
					if again {
						s.LaneIn()
					}
				case wire.TypeGap:
					_, to, _ := wire.ParseGap(fr.Payload)
					f.off = int64(to)
				case wire.TypeExit:
					var e wire.Exit
					wire.ParseJSON(fr.Payload, &e)
					done <- result{exit: &e}
					return
				case wire.TypeError:
					code, msg, _ := wire.ParseError(fr.Payload)
					if code == wire.CodeDetached {
						done <- result{detachedBy: msg}
						return
					}
					passing("%s", msg)
				case wire.TypeViewers:
					var v wire.Viewers
					if wire.ParseJSON(fr.Payload, &v) == nil {
						if s.Welcome.Version < 6 {
							// An older server tells the size here only, not
							// in order with the output (resized frames).
							own(func() []byte { return ot.Session(int(v.Cols), int(v.Rows)) })
						}
						// Drawn at another size than its own: say whose it is.
						wmu.Lock()
						tc, tr := ot.Size()
						wmu.Unlock()
						other := int(v.Cols) != tc || int(v.Rows) != tr
						if h := sizeHolder(v); other && h != "" && h != holder {
							passing("%s", h)
						}
						holder = sizeHolder(v)
					}
					if v.HolderUnresponsive != holderStuck {
						holderStuck = v.HolderUnresponsive
						if holderStuck {
							notice("the session's holder does not answer; what you type waits, and may fail, until it does (termkeep kill ends the session)")
						} else {
							passing("the session's holder answers again")
						}
					}
				case wire.TypeLog:
					var st wire.LogState
					wire.ParseJSON(fr.Payload, &st)
					switch {
					case st.Stopped && !logStopped:
						notice("log stopped: %s; the output is shown but not saved until the log can write again", st.Reason)
					case !st.Stopped && logStopped:
						passing("log resumed; the output in between was not saved")
					}
					logStopped = st.Stopped
				}
				wmu.Lock()
				redraw := ot.Redraw
				if ot.Dirty() && paintTimer == nil {
					// Drawn from the screen model (another size than the
					// session's): paint at most every frameEvery, not per chunk.
					paintTimer = time.AfterFunc(frameEvery, func() {
						own(func() []byte { paintTimer = nil; return ot.Paint() })
					})
				}
				if redraw && !gate.idle() {
					// The terminal is needed back before the new snapshot.
					if gate.withdraw() {
						s.WithdrawLane()
					}
					redraw = false
				} else if !redraw && s.Buffered() == 0 && gate.offer(f.off, canLane()) {
					// Everything sent is on the terminal: a lane may start here.
					term := -1
					if !handed {
						term, handed = laneFD, true
					}
					s.OfferLane(uint64(f.off), term)
				}
				wmu.Unlock()
				if redraw {
					done <- result{redraw: true}
					return
				}
			}
		}()
	loop:
		for {
			select {
			case data, ok := <-input:
				if !ok {
					// A terminal in raw mode ends only when it hangs up
					// (EIO): end as on SIGHUP, which a terminal that was
					// not the controlling one never sends.
					quiesce(s)
					s.Close()
					return nil
				}
				typed.queued(s, data)
				if n := typed.takeDropped(); n > 0 {
					passing("%d bytes typed while the connection was down for more than %v were dropped", n, keyHold)
				}
			case sig := <-sigs:
				if sig == syscall.SIGWINCH {
					size()
					own(func() []byte { return ot.Resize(int(f.cols), int(f.rows)) })
					if f.ignoreSize || f.readOnly {
						s.Resize(f.cols, f.rows) // says its size, takes nothing
					} else {
						// Resizing the terminal under attach takes the
						// session's size (the policy permitting).
						s.Fit(f.cols, f.rows)
					}
					continue
				}
				if sig == syscall.SIGCONT {
					// Stopped, then continued (kill -STOP, fg): the shell
					// had the terminal meanwhile, in its own modes, and
					// drew on it. Raw again, and the screen drawn anew.
					if term.IsTerminal(fd) {
						term.MakeRaw(fd)
					}
					redrawNext = true
					s.Close() // the reader's end reconnects, below
					continue
				}
				quiesce(s)
				s.Close()
				return nil
			case <-detached.ch:
				quiesce(s)
				s.Close()
				farewell = "detached from " + f.ref
				return nil
			case <-ctx.Done():
				quiesce(s)
				s.Close()
				return nil
			case r := <-done:
				typed.connected(nil)
				s.Close()
				wmu.Lock()
				stream = nil
				write, snapshot, resume := gate.lost()
				for _, b := range write {
					tout.Write(b)
				}
				wmu.Unlock()
				if resume {
					rt.resume()
				}
				if snapshot && r.exit == nil && f.off >= 0 && f.claim == 0 {
					// A lane may have written past f.off: the next
					// connection asks where it ended (an unanswered
					// claim stays: this connection had no lane).
					f.claim = f.laneToken
				}
				if errors.As(r.err, new(terminalGone)) {
					return nil // as above: the terminal hung up
				}
				if r.exit != nil {
					var err error
					farewell, err = sessionEnded(f.ref, r.exit)
					return err
				}
				if r.detachedBy != "" {
					farewell = r.detachedBy
					return nil
				}
				if r.redraw || redrawNext {
					// A fresh snapshot draws the session's normal screen
					// again, where the alternate screen's contents were
					// or the shell drew while attach was stopped.
					f.off = wire.FromSnapshot
					redrawNext = false
				} else if errors.Is(r.err, wire.ErrMalformed) {
					return r.err
				}
				break loop // reconnect from f.off
			}
		}
	}
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

// frameEvery is how often attach paints a session drawn from its screen
// model while output flows: every paint writes the whole terminal.
const frameEvery = 16 * time.Millisecond

// noticeFor is how long a notice of an event stays on the bottom row.
const noticeFor = 3 * time.Second
