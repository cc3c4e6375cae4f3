package holder

import (
	"errors"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// The end of the session: the child's exit, the drain of its last output,
// the exit status in meta.json, and a close on purpose.

// run serves until the child has exited, its output is logged and the
// connected server (if any) has been told. sigs delivers SIGTERM and
// CloseSignal (holdSignals).
func (h *holder) run(sigs <-chan os.Signal) int {
	// The holder has no terminal, but a stray SIGHUP or SIGINT (say, from a
	// process-group kill aimed at the server) must not end it: only the
	// child's end does. Ignored only now, once the child runs: a child
	// inherits what its parent ignores (holdSignals caught them until now).
	signal.Ignore(strays...)
	go func() {
		for sig := range sigs {
			if sig == CloseSignal {
				h.close(closeGrace)
			} else {
				h.stop(time.Now())
			}
		}
	}()
	h.serve()
	return 0
}

// holdSignals catches SIGTERM and CloseSignal before the holder answers
// Ready: a server may signal it the moment it has the pid. SIGTERM comes
// from whoever stops the machine or the service (systemd sends it to every
// process at once): the session is interrupted, and comes back after a
// restart. termkeep itself ends a holder it cannot reach with
// CloseSignal, a close on purpose. Both wait in the returned channel
// until run reads it.
func holdSignals() <-chan os.Signal {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, CloseSignal)
	// Strays are caught and dropped (no one reads the channel; Notify
	// never blocks): a caught signal, unlike an ignored one, is back to
	// its default in the child.
	signal.Notify(make(chan os.Signal, 1), strays...)
	return sigs
}

// strays are the signals that must not end a holder.
var strays = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE}

// closeGrace is how long a child hung up by CloseSignal or SIGTERM has
// before SIGKILL (a Close frame says its own).
const closeGrace = 5 * time.Second

// serve accepts server connections and waits for the child; it returns once
// the child has exited, its output is logged, meta.json says so and the
// connected server (if any) has been sent the Exit frame or given up on.
// It leaves the process's signal handling alone (run sets it).
func (h *holder) serve() {
	acceptDone := make(chan struct{})
	go func() { h.acceptLoop(); close(acceptDone) }()

	err := reap(h.cmd) // in the poller, not a thread blocked in wait (reap_linux.go)
	died := time.Now()
	h.mu.Lock()
	h.reaped = true
	h.mu.Unlock()
	code, sig := exitStatus(h.cmd.ProcessState, err)
	h.relay.childGone()

	// Who ended it: a child that died of a stop's signal may be followed
	// by the holder's own SIGTERM, which makes it interrupted (cause.go).
	// The pty is read meanwhile.
	var state, reason string
	for {
		h.mu.Lock()
		var wait time.Duration
		state, reason, wait = judgeEnd(endFacts{closing: h.closing, stopAt: h.stopAt, died: died, code: code, sig: sig, shutdown: h.meta.ShutdownAt != nil}, time.Now())
		h.mu.Unlock()
		if wait == 0 {
			break
		}
		select {
		case <-h.stopped:
		case <-h.closeBegun:
		case <-time.After(wait):
		}
	}
	// The child's output may still sit in the pty, and processes it left
	// behind may still write to it: drain until none holds the pty (EIO),
	// or as drainOver decides. A child that exited by itself has its exit
	// recorded first, in case the holder dies while it lingers.
	select {
	case <-h.readDone:
	default:
		if state == "exited" && h.spec.Linger > 0 {
			h.recordChild(sessiondir.ChildExit{At: died.UTC(), ExitCode: code, Signal: sig}, died.Add(h.spec.Linger))
		}
		h.drain(died)
	}

	// The log is made durable, and the segments retention dropped are
	// gone from disk (Sync waits for the log's background work), before
	// anything says the session ended: a forwarder that sees exited sends
	// the Exit frame at once, and what a server then reads of the log
	// (an export after wait --exit) must be what stays there.
	if err := syncEnded(h.out); err != nil {
		h.log.Error("sync output log", "err", err)
	}
	h.mu.Lock()
	h.meta, h.exitFrame = ended(h.meta, state, reason, code, sig, h.out.End(), time.Now())
	meta := h.meta
	h.exited = true
	h.mu.Unlock()
	h.recordEnd(meta)
	h.poke()
	// Give every connected server a moment to receive the tail and the
	// exit, including one that connected as the child ended: once the
	// accept loop has stopped, every connection it took is in h.ups.
	h.stopAccepting(acceptDone) // accept.go
	h.mu.Lock()
	ups := make([]*upstream, 0, len(h.ups))
	for u := range h.ups {
		ups = append(ups, u)
	}
	h.mu.Unlock()
	deadline := time.After(5 * time.Second)
	for _, u := range ups {
		select {
		case <-u.done:
		case <-deadline:
		}
	}
	for _, u := range ups {
		u.c.Close()
	}
	if err := h.out.Close(); err != nil {
		h.log.Error("close output log", "err", err)
	}
	h.metaMu.Lock()
	if h.status != nil {
		h.status.Close()
		h.status = nil
	}
	h.metaMu.Unlock()
	h.sigMu.Lock()
	h.ptyClosed = true
	h.ptmx.Close()
	h.sigMu.Unlock()
	h.log.Info("session ended", "state", meta.State(), "reason", meta.Reason, "exit_code", code, "signal", sig, "end", meta.End)
	// Last: the next holder may write the directory once this lets go.
	h.lock.Close()
}

// syncEnded syncs an ended session's log (a variable for tests).
var syncEnded = (*outlog.Log).Sync

// ended returns meta.json's record and the Exit frame of a session whose
// child ended at now with status code (128+sig when killed by signal sig)
// and whose output ends at end, as judgeEnd decided (state, reason). An
// interrupted session records no exit status: the child did not end by
// itself, and a restore policy must not take it for one that did.
func ended(m sessiondir.Meta, state, reason string, code, sig int, end uint64, now time.Time) (sessiondir.Meta, wire.Exit) {
	at := now.UTC()
	m.EndedAt, m.End = &at, end
	m.Closed, m.Interrupted, m.Reason = state == "closed", state == "interrupted", reason
	e := wire.Exit{State: state, End: end, Reason: reason}
	if state != "interrupted" {
		m.ExitCode, m.Signal = &code, sig
		e.ExitCode, e.Signal = &code, sig
	} else if m.ShutdownAt != nil {
		e.Cause = wire.CauseShutdown // a SIGTERM after the server said the machine is shutting down
	} else {
		e.Cause = wire.CauseStopped // a SIGTERM from outside
	}
	return m, e
}

// exitStatus is the child's status as a shell reports it, and the signal
// that killed it (0: none); 127 when it could not be waited for.
func exitStatus(ps *os.ProcessState, err error) (code, sig int) {
	if ps == nil {
		return 127, 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), int(ws.Signal())
	}
	return ps.ExitCode(), 0
}

// drain waits for the pty reader after the child was reaped at died: it
// returns when the reader stops on its own (EIO: no process holds the pty
// any more) or stops the reader when drainOver says so.
func (h *holder) drain(died time.Time) {
	last := h.out.End()
	for {
		select {
		case <-h.readDone:
			return
		case <-time.After(drainLook):
		}
		now, end := time.Now(), h.out.End()
		f := drainFacts{linger: h.spec.Linger, since: now.Sub(died), last: last, end: end}
		h.mu.Lock()
		if !h.hungUpAt.IsZero() {
			f.hungUp, f.sinceHangUp, f.grace = true, now.Sub(h.hungUpAt), h.grace
		}
		h.mu.Unlock()
		if drainOver(f) {
			break
		}
		last = end
	}
	h.ptmx.SetReadDeadline(time.Now())
	select {
	case <-h.readDone:
	case <-time.After(time.Second):
	}
}

// drainLook is how often the drain looks whether the pty is still giving
// output; drainMax bounds the drain without a linger, and after a hang-up's
// SIGKILL.
const (
	drainLook = 200 * time.Millisecond
	drainMax  = 2 * time.Second
)

// drainFacts is what the holder knows at a look of the drain.
type drainFacts struct {
	linger      time.Duration // Spec.Linger
	since       time.Duration // since the child was reaped
	hungUp      bool          // a close or a stop hung up the pty's processes
	sinceHangUp time.Duration
	grace       time.Duration // the hang-up's grace, after which they got SIGKILL
	last, end   uint64        // the log's end at the previous look and now
}

// drainOver decides, at a look after the child was reaped, whether the
// holder stops reading the pty, which it otherwise reads until no process
// holds it. Hung up (a close, a stop), the pty's processes got SIGKILL
// after the grace: a holder of the pty that outlives that by drainMax is
// not the session's to wait for (another user's). With a linger, the
// output of processes the child left behind is read for that long,
// however quiet they are for a while. Without one, the drain stops at the
// first look that finds no new output, or after drainMax.
func drainOver(f drainFacts) bool {
	switch {
	case f.hungUp:
		return f.sinceHangUp >= f.grace+drainMax
	case f.linger > 0:
		return f.since >= f.linger
	}
	return f.end == f.last || f.since >= drainMax
}

// close ends the session on purpose: SIGHUP to the child's process group
// (and the pty's foreground group), then SIGKILL after grace.
func (h *holder) close(grace time.Duration) {
	h.mu.Lock()
	if h.exited {
		h.mu.Unlock()
		return
	}
	already := h.closing
	h.closing = true
	h.mu.Unlock()
	if already {
		return
	}
	close(h.closeBegun)
	h.hangUp(grace)
}

// stop ends the session because the machine or the service is stopping
// (SIGTERM at at): the end is recorded interrupted (judgeEnd). The log is
// synced first, since SIGKILL follows within seconds, then the child is
// hung up as a close does, so that a shell saves its history. Only the
// first SIGTERM counts.
func (h *holder) stop(at time.Time) {
	h.mu.Lock()
	if h.exited || !h.stopAt.IsZero() {
		h.mu.Unlock()
		return
	}
	h.stopAt = at
	h.mu.Unlock()
	close(h.stopped)
	h.log.Info("stopped by SIGTERM: hanging up the child")
	if err := h.out.Sync(); err != nil && !errors.Is(err, outlog.ErrClosed) {
		h.log.Error("sync output log", "err", err)
	}
	h.hangUp(closeGrace)
}

// hangUp sends every process of the session's terminal SIGHUP, and
// SIGKILL to those left after grace (unless none holds the pty by then). A
// second call does nothing: the first one's grace runs.
func (h *holder) hangUp(grace time.Duration) {
	h.mu.Lock()
	if h.hungUp {
		h.mu.Unlock()
		return
	}
	h.hungUp, h.hungUpAt, h.grace = true, time.Now(), grace
	h.mu.Unlock()
	h.signalSession(syscall.SIGHUP)
	go func() {
		select {
		case <-h.readDone:
			return
		case <-time.After(grace):
		}
		h.signalSession(syscall.SIGKILL)
	}()
}

// signalSession sends sig to the child (signalChild) and to every other
// process whose terminal is the pty or that holds it open: jobs that
// ignore SIGHUP, processes that left its session with setsid. Once ptmx
// is closed it does nothing: the device may be another session's.
func (h *holder) signalSession(sig syscall.Signal) {
	h.sigMu.Lock()
	defer h.sigMu.Unlock()
	if h.ptyClosed {
		return
	}
	h.signalChild(sig)
	for _, pid := range ptyProcesses(h.ptsDev) {
		syscall.Kill(pid, sig)
	}
}

// signalChild sends sig to the pty's foreground process group and to the
// child's own group; the child is a session leader, so its pid is its group.
// Once the child is reaped its pid may be another process's: only the
// foreground group, which still holds the pty, is signalled then.
func (h *holder) signalChild(sig syscall.Signal) {
	pid := h.cmd.Process.Pid
	h.signalForeground(sig)
	h.mu.Lock()
	reaped := h.reaped
	h.mu.Unlock()
	if reaped {
		return
	}
	if err := syscall.Kill(-pid, sig); err != nil {
		syscall.Kill(pid, sig)
	}
}

// signalForeground sends sig to the pty's foreground process group when
// it is not the child's own: the command a shell runs, never the shell.
func (h *holder) signalForeground(sig syscall.Signal) {
	if fg, err := foreground(h.ptmx); err == nil && fg > 0 && fg != h.cmd.Process.Pid {
		syscall.Kill(-fg, sig)
	}
}

// recordChild records in the status record and meta.json that the child
// exited (c) while the holder reads on: a holder that dies while it
// lingers leaves a finished job known as one.
// Connected servers are told (a linger frame).
func (h *holder) recordChild(c sessiondir.ChildExit, until time.Time) {
	h.mu.Lock()
	h.meta.Child = &c
	h.linger = &wire.Linger{ExitCode: c.ExitCode, Signal: c.Signal, At: h.out.End(), Until: until.UTC()}
	meta := h.meta
	h.mu.Unlock()
	h.log.Info("the child exited; its terminal is still held, reading what the processes left behind print", "exit_code", c.ExitCode, "linger", h.spec.Linger)
	if serr, merr := h.writeRecords(meta); serr != nil && merr != nil {
		h.log.Error("record the child's exit", "status_err", serr, "meta_err", merr)
	}
	h.poke()
}

// endRetry is how often a holder that could not record its end tries again.
const endRetry = time.Second

// recordEnd records the session's end: in the status record, in place, and
// in meta.json. While neither can be written (a full disk under a holder
// whose status record could not be made when it started) it tries again
// every endRetry, still serving: a server that connects meanwhile is told
// the end, and the holder does not leave a finished job to be taken for an
// interrupted one. It gives up once the session's directory is gone.
func (h *holder) recordEnd(meta sessiondir.Meta) {
	for i := 0; ; i++ {
		serr, merr := h.writeRecords(meta)
		switch {
		case merr == nil:
			return
		case serr == nil:
			h.log.Warn("meta.json cannot record the end; the status record has it", "err", merr)
			return
		case i == 0:
			h.log.Error("the end cannot be recorded on disk; trying again every second", "status_err", serr, "meta_err", merr)
		}
		if _, err := os.Stat(h.spec.Dir); errors.Is(err, fs.ErrNotExist) {
			return
		}
		time.Sleep(endRetry)
	}
}

// writeRecords writes meta's status record, then meta.json, each through
// the holder's disk.
func (h *holder) writeRecords(meta sessiondir.Meta) (statusErr, metaErr error) {
	h.metaMu.Lock()
	defer h.metaMu.Unlock()
	return h.writeRecordsLocked(meta)
}

// writeRecordsLocked is writeRecords for a caller that holds metaMu.
func (h *holder) writeRecordsLocked(meta sessiondir.Meta) (statusErr, metaErr error) {
	statusErr = errNoStatus
	if h.status != nil {
		statusErr = h.status.Write(sessiondir.StatusOf(meta))
	}
	return statusErr, sessiondir.WriteMetaThrough(h.spec.Dir, meta, h.disk)
}

// errNoStatus: the status record could not be made when the holder started.
var errNoStatus = errors.New("holder: no status record")
