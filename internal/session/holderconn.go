package session

// The host's connection to its holder: dialling it, reading its stream,
// reconnecting after a drop, and deciding how a session whose holder is
// gone has ended.

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"syscall"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/session/holderwatch"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// Connect dials the holder and resumes its stream from offset from (-1: the
// end of the log on disk). It returns once the holder has welcomed the
// server; the stream is then read in the background, and a dropped
// connection is retried until the holder is found gone, at which point the
// session ends as exited (status on disk) or interrupted.
func (h *Host) Connect(from int64) error { return h.connect(from, false) }

// connect is Connect; again says it follows a dropped connection, for the
// log line and the count.
func (h *Host) connect(from int64, again bool) error {
	h.mu.Lock()
	shut := h.closer.shut
	h.mu.Unlock()
	if shut {
		return errHostClosed
	}
	// The model starts before the holder is dialed, so every live size
	// change reaches it.
	h.startModel()
	if from < 0 {
		l, err := h.outlog()
		if err != nil {
			return err
		}
		if err := l.Refresh(); err != nil {
			return err
		}
		// Not past damage of a length the log could only estimate: the
		// holder's log may end before that estimate.
		from = int64(l.SureEnd())
		h.shell.load(l, uint64(from))
	}
	up, welcome, err := dialHolder(h.dir, from, h.health.timeout)
	if err != nil {
		if errors.Is(err, ErrHolderSilent) {
			// Its socket took the connection but it says nothing: stopped
			// or wedged. A kill does not wait on it.
			h.mu.Lock()
			if h.health.unresponsive.IsZero() && h.exit == nil {
				h.health.unresponsive = h.now()
				h.viewersChangedLocked()
			}
			h.mu.Unlock()
		}
		return err
	}
	h.mu.Lock()
	if h.closer.shut {
		// Closed while dialling: a stopping server keeps no connection.
		h.mu.Unlock()
		up.c.Close()
		return errHostClosed
	}
	h.closer.readers.Add(1)
	h.up = up
	h.end = uint64(from)
	h.win.Reset(h.end)
	h.size.cols, h.size.rows, h.pid, h.holderVersion = welcome.Cols, welcome.Rows, welcome.Pid, welcome.Version
	if welcome.Version < 7 && h.reports.mode != nil {
		// A holder that cannot say the mode: unknown, not the last one heard.
		h.setTermModeLocked(nil)
	}
	// It welcomed us: whatever held it up before is over.
	h.health.unresponsive = time.Time{}
	h.room.ver++ // the viewers frame says whether it answers
	h.wakeLocked()
	h.mu.Unlock()
	if again {
		h.counts.reconnects.Add(1)
		h.meter.Reconnects.Add(1)
		h.log.Info("holder reconnected", "pid", welcome.Pid, "offset", from)
	} else {
		h.log.Info("holder connected", "pid", welcome.Pid, "offset", from)
	}
	go h.readHolder(up)
	go h.watchHolder(up)
	h.pokeLanes(false) // a claim waiting for a holder is asked now
	return nil
}

// holderReports is what the holder reports of the session besides its
// output, for viewers and the server's list. Guarded by Host.mu.
type holderReports struct {
	log     wire.LogState  // whether the holder is logging (wire.TypeLog)
	logVer  uint64         // bumped when log changes
	linger  *wire.Linger   // the child exited, the holder reads on (wire.TypeLinger)
	mode    *wire.TermMode // the pty's input mode as the holder last said it; nil: unknown
	modeVer uint64         // bumped when mode changes
}

// errHostClosed is returned by connect once Close has begun.
var errHostClosed = errors.New("session: the host is closed")

// readHolder consumes the holder's stream until it ends, then decides
// whether to reconnect or to record the end. A connection dropped by Close
// is neither: the session goes on without this server.
func (h *Host) readHolder(up *holderConn) {
	defer h.closer.readers.Done()
	defer close(up.done)
	r := newFrameReader(up.c)
	var buf []byte // reused, unless the window kept an output frame's bytes
	for {
		f, err := wire.ReadFrame(r, &buf)
		if err != nil {
			break
		}
		up.heard.Add(1)
		if err := wire.Validate(f); err != nil {
			h.log.Error("bad frame from holder", "err", err)
			break
		}
		if f.Type == wire.TypeOutput {
			if h.holderOutput(f.Payload) {
				buf = nil
			}
			continue
		}
		if f.Type == wire.TypeExit {
			h.holderExit(up, f.Payload)
			return
		}
		h.holderFrame(up, f)
	}
	up.c.Close()
	h.laneLost(up)
	h.mu.Lock()
	if h.up == up {
		h.up = nil
	}
	shut := h.closer.shut
	h.mu.Unlock()
	h.pokeLanes(true) // claims asked on up are asked again of the next
	if !shut {
		h.reconnect()
	}
}

// holderOutput takes an output frame's payload (readHolder); it reports
// whether the window kept its bytes.
func (h *Host) holderOutput(payload []byte) (kept bool) {
	off, data, _ := wire.ParseOutput(payload)
	h.shell.feed(off, h.now(), data)
	// The arbiter learns of a question before any viewer can see
	// it: a viewer quick to answer must find it asked.
	h.q.scan.Scan(data, off, h.asked)
	kept = h.appendOutput(off, data)
	h.maybeCheckCwd()
	return kept
}

// holderExit takes the holder's exit frame over up: the session has
// ended.
func (h *Host) holderExit(up *holderConn, payload []byte) {
	var e wire.Exit
	wire.ParseJSON(payload, &e)
	h.mu.Lock()
	if h.closing && e.State != "closed" {
		// Asked to close, it ended meanwhile (by itself, or by a
		// stop): the user's close is what they asked for.
		e.State, e.Reason = "closed", ""
	}
	if e.State == "closed" && e.Reason == "" {
		e.Reason = cmp.Or(h.closeReason, closedReason)
	}
	h.mu.Unlock()
	up.c.Close()
	h.laneLost(up)
	h.finish(e)
}

// holderFrame takes a frame from the holder over up other than output and
// exit (readHolder).
func (h *Host) holderFrame(up *holderConn, f wire.Frame) {
	switch f.Type {
	case wire.TypeResized:
		off, cols, rows, _ := wire.ParseResized(f.Payload)
		h.mu.Lock()
		h.size.resized(off, cols, rows)
		h.viewersChangedLocked()
		m := h.model
		h.mu.Unlock()
		if m != nil {
			m.addSize(outlog.SizeChange{Offset: off, Cols: cols, Rows: rows})
		}
	case wire.TypeGap:
		_, to, _ := wire.ParseGap(f.Payload)
		h.mu.Lock()
		if to > h.end {
			h.end = to
			h.win.Reset(to)
		}
		h.mu.Unlock()
	case wire.TypeLinger:
		var l wire.Linger
		wire.ParseJSON(f.Payload, &l)
		h.mu.Lock()
		h.reports.linger = &l
		h.mu.Unlock()
		h.log.Info("the child exited; its holder reads what the processes it left behind print", "exit_code", l.ExitCode, "until", l.Until)
	case wire.TypeLog:
		var st wire.LogState
		wire.ParseJSON(f.Payload, &st)
		h.setLogState(st)
	case wire.TypeTermMode:
		m, _ := wire.ParseTermMode(f.Payload)
		h.setTermMode(&m)
	case wire.TypePrepared:
		v, _ := wire.ParseShutdown(f.Payload)
		select {
		case up.prepared <- v:
		default:
		}
	case wire.TypeLaneEnd:
		x, _ := wire.ParseUint64(f.Type, f.Payload)
		h.laneEnded(x) // viewer_laneowner.go
	case wire.TypeLaneClaimed:
		token, end, back, _ := wire.ParseLaneClaimed(f.Payload)
		h.laneClaimed(token, end, bytes.Clone(back)) // viewer_laneowner.go
	case wire.TypeFgState:
		s, _ := wire.ParseFgState(f.Payload)
		up.fg.answer(s) // foreground.go
	case wire.TypeLaneInput:
		h.laneHandBack(bytes.Clone(f.Payload)) // viewer_lanein.go
	case wire.TypeLaneTyped:
		n, _ := wire.ParseUint64(f.Type, f.Payload)
		h.laneTyped(n)
	case wire.TypeError:
		_, msg, _ := wire.ParseError(f.Payload)
		h.log.Warn("holder reported an error", "msg", msg)
	case wire.TypePong:
	}
}

// setLogState records whether the holder logs the output, and says so.
func (h *Host) setLogState(st wire.LogState) {
	h.mu.Lock()
	if st != h.reports.log {
		h.reports.log = st
		h.reports.logVer++
		h.wakeLocked()
	}
	h.mu.Unlock()
	if st.Stopped {
		h.log.Error("the session's output log stopped; output still reaches viewers but is not saved", "at", st.At, "reason", st.Reason)
	} else {
		h.log.Info("the session's output log resumed")
	}
}

// reconnect retries the holder for a while after a dropped connection. A
// holder whose process is gone ends the session.
func (h *Host) reconnect() {
	delay := 50 * time.Millisecond
	for attempt := 0; attempt < 20; attempt++ {
		if m, err := sessiondir.ReadMeta(h.dir); err == nil && m.EndedAt != nil {
			h.finish(ExitFromMeta(m))
			return
		}
		if outOfFiles() { // rlimit.go: nothing tells whether the holder is gone
			attempt = 0
		} else if !h.holderAlive() {
			break
		} else if err := h.connect(-1, true); err == nil || errors.Is(err, errHostClosed) {
			return
		}
		select {
		case <-h.closer.closed:
			// The server is stopping: whatever became of the holder, the
			// next server finds it.
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, time.Second)
	}
	// One last look: the holder may have written its exit while we retried.
	if m, err := sessiondir.ReadMeta(h.dir); err == nil && m.EndedAt != nil {
		h.finish(ExitFromMeta(m))
		return
	}
	if held, _ := sessiondir.LockHeld(h.dir); held {
		// Its holder runs, its socket gone: recorded as ended, the session
		// could be restored over it. It stays running, unreachable.
		h.log.Error("a live holder cannot be reached: its socket is gone; its session stays running, unreachable until the holder ends", "session", h.ID)
		return
	}
	h.finish(h.interrupted())
}

// interrupted describes a session whose holder died without recording an
// end: no status is known, unless the holder had recorded the child's own
// exit while it read the output of processes the child left behind (then
// the session exited, and a restore must not run it again).
func (h *Host) interrupted() wire.Exit {
	var end uint64
	if l, err := h.outlog(); err == nil {
		l.Refresh()
		end = l.End()
	}
	var m sessiondir.Meta
	if mm, err := sessiondir.ReadMetaOrSalvage(h.dir); err == nil {
		m = mm
	}
	if c := m.Child; c != nil {
		code := c.ExitCode
		return wire.Exit{
			State: "exited", ExitCode: &code, Signal: c.Signal, End: end,
			Reason: fmt.Sprintf("its process exited (status %d); its holder process (pid %d) died while it read what the processes left behind printed; output up to byte %d is kept", code, m.HolderPid, end),
		}
	}
	if m.ShutdownAt != nil {
		// Told the machine was shutting down, it was killed before it
		// recorded the end: the shutdown's last SIGKILL.
		return wire.Exit{
			State: "interrupted", End: end, Cause: wire.CauseShutdown,
			Reason: fmt.Sprintf("the machine shut down; its holder process (pid %d) was killed before it recorded an end; output up to byte %d is kept", m.HolderPid, end),
		}
	}
	return wire.Exit{
		State: "interrupted", End: end,
		Reason: fmt.Sprintf("its holder process (pid %d) died without recording an exit status; output up to byte %d is kept", m.HolderPid, end),
	}
}

// holderAlive reports whether the session's holder runs: by its lock, or
// for a holder from before the lock, by the process meta.json names.
func (h *Host) holderAlive() bool {
	if held, known := sessiondir.LockHeld(h.dir); known {
		return held
	}
	m, err := sessiondir.ReadMetaOrSalvage(h.dir)
	if err != nil || m.HolderPid <= 0 {
		return false
	}
	return processAlive(m.HolderPid)
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ExitFromMeta is the end meta.json records (m.EndedAt set): how the
// session ended, its status and its last offset. An interrupted end in
// meta.json is the holder's own, stopped by a SIGTERM from outside: the
// shutdown's when the server had told it one was coming.
func ExitFromMeta(m sessiondir.Meta) wire.Exit {
	e := wire.Exit{State: m.State(), ExitCode: m.ExitCode, Signal: m.Signal, End: m.End, Reason: m.Reason}
	switch {
	case m.Interrupted && m.ShutdownAt != nil:
		e.Cause = wire.CauseShutdown
	case m.Interrupted:
		e.Cause = wire.CauseStopped
	}
	return e
}

// EndIfGone ends the session when no connection to its holder is open and
// the holder no longer runs (killed while it could not be reached), as
// Resolve decides. A connected host learns of its holder's end by itself.
func (h *Host) EndIfGone() {
	h.mu.Lock()
	up, exit := h.up, h.exit
	h.mu.Unlock()
	if exit != nil || up != nil || h.holderAlive() {
		return
	}
	h.finish(h.Resolve())
}

// Resolve decides how a session the server finds on disk stands, without a
// live connection: ended (from meta.json) or interrupted. It is used when the
// holder cannot be reached at start.
func (h *Host) Resolve() wire.Exit {
	if m, err := sessiondir.ReadMetaOrSalvage(h.dir); err == nil && m.EndedAt != nil {
		return ExitFromMeta(m)
	}
	return h.interrupted()
}

// DefaultHolderTimeout is how long a holder has to answer a ping, and to
// take a write, when Config.HolderTimeout is 0.
const DefaultHolderTimeout = 10 * time.Second

// watchHolder pings the holder over up every half of the holder timeout
// and marks the session unresponsive while the holder does not answer
// (holderwatch.Watch), until the connection ends.
func (h *Host) watchHolder(up *holderConn) {
	w := holderwatch.New(holderwatch.Config{Interval: h.health.timeout / 2, Timeout: h.health.timeout}, h.now())
	t := time.NewTimer(w.Step())
	defer t.Stop()
	var frames, seq uint64
	var heard time.Time
	for {
		select {
		case <-up.done:
			return
		case <-h.closer.closed:
			return
		case <-t.C:
		}
		now := h.now()
		if n := up.heard.Load(); n != frames {
			frames, heard = n, now // heard since the last wake: a step late at most
		}
		v := w.Wake(now, heard)
		t.Reset(w.Step())
		if v.Changed {
			h.mu.Lock()
			if h.up == up && h.exit == nil {
				h.health.unresponsive = v.Since
				h.viewersChangedLocked()
			}
			h.mu.Unlock()
			if v.Unresponsive {
				h.log.Warn("the session's holder does not answer; writes to it fail after the holder timeout", "pid", h.Info().Pid, "timeout", h.health.timeout)
			} else {
				h.log.Info("the session's holder answers again")
			}
		}
		if v.Ping {
			seq++
			up.tryPing(seq)
		}
	}
}
