package holder

import (
	"errors"
	"time"

	"syscall"
	"termkeep/internal/outlog"
	"termkeep/internal/rawio"
	"termkeep/internal/wire"
)

// The pty side: the reader that copies the pty into the log, the look for
// a keystroke's echo, and what the holder does while the log cannot write.

// echoSpin is how long awaitEcho looks for a keystroke's echo.
const echoSpin = 200 * time.Microsecond

// poke wakes the current connection's forwarder, without blocking: the log
// grew, the size changed or the session ended.
func (h *holder) poke() {
	h.mu.Lock()
	u := h.conn
	h.mu.Unlock()
	if u != nil {
		select {
		case u.notify <- struct{}{}:
		default:
		}
	}
}

// readPty copies the pty into the log until the pty fails (EIO once every
// writer of the slave side is gone, or the deadline set by drain).
func (h *holder) readPty() {
	buf := make([]byte, 64<<10)
	for {
		h.relay.wait()
		h.ptyMu.Lock()
		n, err := h.ptmxR.ReadHolding(buf, &h.ptyMu) // lets go of ptyMu while it waits
		if n > 0 {
			h.logOutput(buf[:n])
		}
		h.ptyMu.Unlock()
		if err != nil {
			return // EIO: no process holds the pty any more; or drain's deadline
		}
	}
}

// logOutput logs a chunk read from the pty and wakes the forwarder. The caller
// holds ptyMu from the read on, so chunks are logged in the order read.
func (h *holder) logOutput(p []byte) {
	off, aerr := h.out.Append(p)
	// Bytes the log refused have no offset: the lane ends before them.
	h.laneWrite(off, p, aerr == nil || errors.Is(aerr, outlog.ErrStopped))
	if errors.Is(aerr, outlog.ErrStopped) || h.logStopped.Load() {
		// The bytes have their offsets and reach the server from
		// memory; the log retries by itself.
		h.checkLog()
	} else if aerr != nil {
		// The log is the source of truth; without it we cannot keep
		// the promise, but the child must not block: keep reading so
		// it runs on, and say so once.
		h.mu.Lock()
		h.appendErrs++
		first := h.appendErrs == 1
		h.mu.Unlock()
		if first {
			h.log.Error("append to output log failed; output is being lost", "err", aerr)
		}
	}
	h.poke()
}

// awaitEcho is what the holder does right after it wrote a keystroke to the
// pty, when no more input is waiting: rather than sleep until the pty's echo
// wakes it (on a virtual machine, waking an idle process costs tens of
// microseconds, each hop of the echo's path once), it looks for the echo for
// up to echoSpin, yielding the CPU between looks, and forwards it at once,
// as long as looks find echoes (spinPolicy, echospin.go).
// Output that takes longer is read by readPty as always. Once the child
// has exited it does nothing: what the pty still gives then is drain's.
func (h *holder) awaitEcho() {
	if h.relay.free.Load() {
		return
	}
	now := time.Now()
	h.spinMu.Lock()
	look := h.spin.look(now)
	h.spinMu.Unlock()
	if !look {
		return
	}
	found := false
	defer func() {
		h.spinMu.Lock()
		h.spin.looked(time.Now(), found)
		h.spinMu.Unlock()
	}()
	deadline := now.Add(echoSpin)
	for time.Now().Before(deadline) {
		if h.ptyMu.TryLock() {
			n, err := h.ptmxR.TryRead(h.echoBuf[:])
			if n > 0 {
				h.logOutput(h.echoBuf[:n])
			}
			h.ptyMu.Unlock()
			if n > 0 || err != syscall.EAGAIN {
				found = true
				return
			}
		}
		rawio.Yield()
	}
}

// checkLog notes a change in whether the log is logging, says it in the
// holder's log, and wakes the forwarder to tell the server. While the log
// is stopped, a goroutine retries it every second, so that a quiet session
// resumes logging too.
func (h *holder) checkLog() {
	st := h.out.Stopped()
	h.mu.Lock()
	if (st != nil) == h.logState.Stopped {
		h.mu.Unlock()
		return
	}
	h.logState = wire.LogState{Stopped: st != nil}
	h.logStopped.Store(st != nil)
	if st != nil {
		h.logState.At, h.logState.Reason = st.At, st.Reason
	}
	h.logVer++
	h.mu.Unlock()
	if st != nil {
		h.log.Error("output log stopped; the session runs on and its output still reaches viewers, but is not saved until the log can write again",
			"at", st.At, "reason", st.Reason, "err", st.Err)
		go h.retryLog()
	} else {
		h.log.Info("output log resumed; the output in between is recorded as a gap", "end", h.out.End())
	}
	h.poke()
}

func (h *holder) retryLog() {
	for {
		time.Sleep(time.Second)
		if err := h.out.Retry(); errors.Is(err, outlog.ErrClosed) {
			return
		}
		h.checkLog()
		if !h.logStopped.Load() {
			return
		}
	}
}
