package holder

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// The end of the session: the child's exit, the drain of its last output,
// the exit status in meta.json, and a close on purpose.

// run serves until the child has exited, its output is logged and the
// connected server (if any) has been told.
func (h *holder) run() int {
	// The holder has no terminal, but a stray SIGHUP or SIGINT (say, from a
	// process-group kill aimed at the server) must not end it: only the
	// child's end does. SIGTERM asks for a graceful close.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		for range term {
			h.close(5 * time.Second)
		}
	}()
	h.serve()
	return 0
}

// serve accepts server connections and waits for the child; it returns once
// the child has exited, its output is logged, meta.json says so and the
// connected server (if any) has been sent the Exit frame or given up on.
// It leaves the process's signal handling alone (run sets it).
func (h *holder) serve() {
	go h.acceptLoop()

	err := reap(h.cmd) // in the poller, not a thread blocked in wait (reap_linux.go)
	code, sig := exitStatus(h.cmd.ProcessState, err)
	// The child is gone; its output may still sit in the pty (or be written by
	// a process it left behind). Drain until the pty reports EIO or stays
	// quiet, so the log ends with the child's last byte.
	h.relay.childGone()
	h.drain(h.readDone)

	h.mu.Lock()
	now := time.Now().UTC()
	h.meta.EndedAt, h.meta.ExitCode, h.meta.Signal = &now, &code, sig
	h.meta.Closed = h.closing
	h.meta.End = h.out.End()
	meta := h.meta
	state := "exited"
	if h.closing {
		state = "closed"
	}
	h.exited = true
	h.exitFrame = wire.Exit{State: state, ExitCode: &code, Signal: sig, End: meta.End}
	conn := h.conn
	h.mu.Unlock()

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
	// Give a connected server a moment to receive the tail and the exit.
	if conn != nil {
		select {
		case <-conn.done:
		case <-time.After(5 * time.Second):
		}
	}
	h.ln.Close()
	h.mu.Lock()
	if h.conn != nil {
		h.conn.c.Close()
	}
	h.mu.Unlock()
	if err := h.out.Close(); err != nil {
		h.log.Error("close output log", "err", err)
	}
	h.ptmx.Close()
	h.log.Info("session ended", "exit_code", code, "signal", sig, "end", meta.End)
}

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
	end := h.out.End()
	// A process the child left behind may write for ever; its output after
	// this bound is not the child's, and closing the pty hangs it up.
	limit := time.Now().Add(2 * time.Second)
	for time.Now().Before(limit) {
		select {
		case <-readDone:
			return
		case <-time.After(200 * time.Millisecond):
		}
		if e := h.out.End(); e != end {
			end = e
			continue
		}
		break
	}
	// Quiet, or drained long enough: stop the reader.
	h.ptmx.SetReadDeadline(time.Now())
	select {
	case <-readDone:
	case <-time.After(time.Second):
	}
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
func (h *holder) signalChild(sig syscall.Signal) {
	pid := h.cmd.Process.Pid
	if fg, err := foreground(h.ptmx); err == nil && fg > 0 && fg != pid {
		syscall.Kill(-fg, sig)
	}
	if err := syscall.Kill(-pid, sig); err != nil {
		syscall.Kill(pid, sig)
	}
}
