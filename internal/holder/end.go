package holder

import (
	"errors"
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
	// The child is gone; its output may still sit in the pty (or be written by
	// a process it left behind). Drain until the pty reports EIO or stays
	// quiet, so the log ends with the child's last byte.
	h.relay.childGone()
	h.drain(h.readDone)

	// Who ended it: a child that died of a stop's signal may be followed
	// by the holder's own SIGTERM, which makes it interrupted (cause.go).
	var meta sessiondir.Meta
	for {
		h.mu.Lock()
		now := time.Now()
		state, reason, wait := judgeEnd(endFacts{closing: h.closing, stopAt: h.stopAt, died: died, code: code, sig: sig}, now)
		if wait == 0 {
			h.meta, h.exitFrame = ended(h.meta, state, reason, code, sig, h.out.End(), now)
			meta = h.meta
			h.exited = true
			h.mu.Unlock()
			break
		}
		h.mu.Unlock()
		select {
		case <-h.stopped:
		case <-h.closeBegun:
		case <-time.After(wait):
		}
	}

	// The log is made durable before meta.json says the session ended, so
	// an ended session's log is always complete on disk.
	if err := h.out.Sync(); err != nil {
		h.log.Error("sync output log", "err", err)
	}
	h.metaMu.Lock()
	if err := sessiondir.WriteMeta(h.spec.Dir, meta); err != nil {
		h.log.Error("write meta", "err", err)
	}
	h.metaMu.Unlock()
	h.poke()
	// Give every connected server a moment to receive the tail and the
	// exit, including one that connected as the child ended: once the
	// accept loop has stopped, every connection it took is in h.ups.
	h.ln.Close()
	<-acceptDone
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
	h.ptmx.Close()
	h.log.Info("session ended", "state", meta.State(), "reason", meta.Reason, "exit_code", code, "signal", sig, "end", meta.End)
	// Last: the next holder may write the directory once this lets go.
	h.lock.Close()
}

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
	} else {
		e.Cause = wire.CauseStopped // the holder's one interrupted end: a SIGTERM from outside
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

// drain waits for the pty reader after the child exited: it returns when the
// reader stops on its own (EIO: no process holds the pty any more) or when the
// pty has been quiet for a moment (a background process the child left behind
// still holds it open).
func (h *holder) drain(readDone <-chan struct{}) {
	start, last := time.Now(), h.out.End()
	for {
		select {
		case <-readDone:
			return
		case <-time.After(drainLook):
		}
		end := h.out.End()
		if drainOver(time.Since(start), last, end) {
			break
		}
		last = end
	}
	// Quiet, or drained long enough: stop the reader.
	h.ptmx.SetReadDeadline(time.Now())
	select {
	case <-readDone:
	case <-time.After(time.Second):
	}
}

// drainLook is how often the drain looks whether the pty is still giving
// output; drainMax bounds the drain: a process the child left behind may
// write for ever, its output after this bound is not the child's, and
// closing the pty hangs it up.
const (
	drainLook = 200 * time.Millisecond
	drainMax  = 2 * time.Second
)

// drainOver decides, at a look after the child exited, whether the drain
// stops the pty's reader: the log's end did not move since the last look
// (last) or the drain has run for drainMax (since).
func drainOver(since time.Duration, last, end uint64) bool {
	return end == last || since >= drainMax
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

// hangUp sends the child SIGHUP, and SIGKILL after grace unless it has
// ended by then. A second call does nothing: the first one's grace runs.
func (h *holder) hangUp(grace time.Duration) {
	h.mu.Lock()
	if h.hungUp {
		h.mu.Unlock()
		return
	}
	h.hungUp = true
	h.mu.Unlock()
	h.signalChild(syscall.SIGHUP)
	go func() {
		time.Sleep(grace)
		h.mu.Lock()
		exited := h.exited
		h.mu.Unlock()
		if !exited {
			h.signalChild(syscall.SIGKILL)
		}
	}()
}

// signalChild sends sig to the pty's foreground process group and to the
// child's own group; the child is a session leader, so its pid is its group.
// Once the child is reaped its pid may be another process's: only the
// foreground group, which still holds the pty, is signalled then.
func (h *holder) signalChild(sig syscall.Signal) {
	pid := h.cmd.Process.Pid
	if fg, err := foreground(h.ptmx); err == nil && fg > 0 && fg != pid {
		syscall.Kill(-fg, sig)
	}
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
