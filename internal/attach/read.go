package attach

import (
	"bytes"
	"time"

	"termkeep/internal/client"
	"termkeep/internal/wire"
)

// read reads one connection until it ends, acting on each frame; it
// returns how it ended.
func (c *attacher) read(s *client.Stream) result {
	handed := false // the terminal went with an offer on this connection
	for {
		fr, err := s.Next()
		if err != nil {
			return result{err: err}
		}
		keep := c.cfg.Keepalive.Interval > 0
		if keep {
			c.heard.Store(int64(time.Since(c.began)))
			c.drawing.Store(true)
		}
		r, end := c.frame(s, fr)
		redraw := !end && c.afterFrame(s, &handed)
		if keep {
			c.heard.Store(int64(time.Since(c.began)))
			c.drawing.Store(false)
		}
		if end {
			return r
		}
		if redraw {
			return result{redraw: true}
		}
	}
}

// frame acts on one frame; end says the connection is over, with r.
func (c *attacher) frame(s *client.Stream, fr wire.Frame) (r result, end bool) {
	switch fr.Type {
	case wire.TypeOutput:
		off, data, _ := wire.ParseOutput(fr.Payload)
		if err := c.paintOutput(func() []byte { c.scanMarks(data); return c.ot.Output(data) }); err != nil {
			return result{err: err}, true
		}
		c.res.wrote(off, len(data))
	case wire.TypeSnapshot:
		off, data, _ := wire.ParseOutput(fr.Payload)
		if err := c.paintOutput(func() []byte {
			if c.pred != nil && bytes.HasPrefix(data, []byte("\x1bc")) {
				c.marks.Reset() // the screen is drawn anew: no sequence continues
			}
			return c.ot.Snapshot(data)
		}); err != nil {
			return result{err: err}, true
		}
		if n := c.res.snapshot(off); n > 0 {
			// A skip to the present (the log no longer holds what this
			// terminal missed, or it fell a queue behind): say so.
			c.passing("skipped %d bytes of output: the screen is drawn anew", n)
		}
	case wire.TypeResized:
		// The output from here on was printed at this size.
		_, cols, rows, _ := wire.ParseResized(fr.Payload)
		c.own(func() []byte { return c.ot.Session(int(cols), int(rows)) })
	case wire.TypeLaneWritten:
		// A lane wrote these: follow them, do not write them.
		off, data, _ := wire.ParseOutput(fr.Payload)
		c.wmu.Lock()
		c.ot.Written(data)
		c.wmu.Unlock()
		c.res.wrote(off, len(data))
	case wire.TypeLaneEnd:
		c.laneEnd()
	case wire.TypeLaneIn:
		// The holder may read the terminal: stop reading it first
		// (outside wmu: the reader may be handing a chunk to the
		// stream), then say so.
		c.wmu.Lock()
		may := c.conds.input(s.Welcome.Version, c.leaving) && leadsTerminal(c.rt)
		pause := c.gate.laneIn(may)
		c.wmu.Unlock()
		if pause {
			c.rt.pause()
			s.LaneIn()
		}
	case wire.TypeLaneInput:
		// Keys the holder read and did not type: as if read here, then
		// the holder may read on.
		left := c.typed.take(fr.Payload, c.cfg.DetachKey, c.detached)
		c.wmu.Lock()
		again := c.gate.handBack(!left && !c.leaving)
		c.wmu.Unlock()
		if again {
			s.LaneIn()
		}
	case wire.TypeGap:
		from, to, _ := wire.ParseGap(fr.Payload)
		c.res.gap(to)
		c.passing("skipped %d bytes of output the log no longer holds", to-from)
	case wire.TypeExit:
		var e wire.Exit
		wire.ParseJSON(fr.Payload, &e)
		return result{exit: &e}, true
	case wire.TypeError:
		code, msg, _ := wire.ParseError(fr.Payload)
		if code == wire.CodeDetached {
			return result{detachedBy: msg}, true
		}
		c.passing("%s", msg)
	case wire.TypeViewers:
		c.viewers(s, fr.Payload)
	case wire.TypeLog:
		c.logState(fr.Payload)
	case wire.TypeTermMode:
		c.termModeFrame(fr.Payload)
	case wire.TypePong:
		c.ponged(fr.Payload)
	}
	return result{}, false
}

// laneEnd takes a lane-end: attach may write again, starting with what it
// kept, and reads its terminal again.
func (c *attacher) laneEnd() {
	c.res.laneEnded()
	c.wmu.Lock()
	write, resume := c.gate.ended()
	c.ownAgain(write, resume)
}

// ownAgain takes the terminal back from a lane that ended (wmu held; it
// lets go): attach's kept lines are written, a quiesce waiting is woken,
// and attach reads its terminal again if it had stopped (resume).
func (c *attacher) ownAgain(write [][]byte, resume bool) {
	for _, b := range write {
		c.tout.Write(b)
	}
	if c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
	c.wmu.Unlock()
	if resume {
		c.rt.resume()
	}
}

// afterFrame paints from the model when due, and offers a lane when the
// terminal has everything it was sent; it reports a redraw to connect for.
func (c *attacher) afterFrame(s *client.Stream, handed *bool) (redraw bool) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	redraw = c.ot.Redraw
	if c.ot.Dirty() && c.paintTimer == nil {
		// Drawn from the screen model (another size than the session's):
		// paint at most every frameEvery, not per chunk.
		c.paintTimer = time.AfterFunc(frameEvery, func() {
			c.own(func() []byte { c.paintTimer = nil; return c.ot.Paint() })
		})
	}
	switch {
	case redraw && !c.gate.idle():
		// The terminal is needed back before the new snapshot.
		if c.gate.withdraw() {
			s.WithdrawLane()
		}
		return false
	case redraw:
		return true
	}
	may := c.conds.output(s.Welcome.Version, c.ot.Rendered() || c.ot.Redraw, c.res.off, c.leaving)
	if s.Buffered() == 0 && c.gate.offer(c.res.off, may) {
		// Everything sent is on the terminal: a lane may start here.
		term := -1
		if !*handed {
			term, *handed = c.conds.fd, true
		}
		s.OfferLane(uint64(c.res.off), term)
	}
	return false
}

// viewers takes a viewers frame: whose size the session has, and whether
// its holder answers.
func (c *attacher) viewers(s *client.Stream, p []byte) {
	var v wire.Viewers
	if wire.ParseJSON(p, &v) == nil {
		if s.Welcome.Version < 6 {
			// An older server tells the size here only, not in order with
			// the output (resized frames).
			c.own(func() []byte { return c.ot.Session(int(v.Cols), int(v.Rows)) })
		}
		// Drawn at another size than its own: say whose it is.
		c.wmu.Lock()
		tc, tr := c.ot.Size()
		c.wmu.Unlock()
		other := int(v.Cols) != tc || int(v.Rows) != tr
		if h := sizeHolder(v); other && h != "" && h != c.holder {
			c.passing("%s", h)
		}
		c.holder = sizeHolder(v)
	}
	if v.HolderUnresponsive != c.holderStuck {
		c.holderStuck = v.HolderUnresponsive
		if c.holderStuck {
			c.notice("the session's holder does not answer; what you type waits, and may fail, until it does (termkeep kill ends the session)")
		} else {
			c.passing("the session's holder answers again")
		}
	}
}

// logState takes a log frame: whether the session's output is saved.
func (c *attacher) logState(p []byte) {
	var st wire.LogState
	wire.ParseJSON(p, &st)
	switch {
	case st.Stopped && !c.logStopped:
		c.notice("log stopped: %s; the output is shown but not saved until the log can write again", st.Reason)
	case !st.Stopped && c.logStopped:
		c.passing("log resumed; the output in between was not saved")
	}
	c.logStopped = st.Stopped
}
