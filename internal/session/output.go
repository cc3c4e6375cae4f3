package session

import (
	"runtime/debug"
	"sync"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/session/catchup"
	"termkeep/internal/wire"
)

// The host's side of the session's output: the in-memory window of recent
// output (package window) that viewers and the screen model copy from,
// what they learn when the log on disk cannot serve them, and memory
// handed back once a session goes quiet.

// recentCap bounds the in-memory window of recent output per session.
const recentCap = 1 << 20

// A session whose output has been quiet for idleAfter keeps only its last
// idleWindow bytes in memory: the window is there for viewers that follow
// live output, and the rest is a disk read away. With a hundred idle
// sessions that is a hundred MiB the server does not hold.
const (
	idleAfter  = 5 * time.Second
	idleWindow = 64 << 10
)

// appendOutput adds output at off to the window. It reports whether the
// window keeps data itself (else it copied what it keeps, and the caller may
// reuse data's buffer).
func (h *Host) appendOutput(off uint64, data []byte) (kept bool) {
	if len(data) == 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if off+uint64(len(data)) <= h.end {
		return false // a duplicate after a reconnect, or past the end recorded
	}
	n, kept := h.win.Append(off, data)
	h.meter.OutputBytes.Add(uint64(n))
	h.end = h.win.End()
	h.usage.output = h.now()
	h.wakeLocked()
	return kept
}

// window returns the recent output from off on, at most max bytes of it,
// as slices the caller must not write to (window.Window.Read); nil when off
// is not in the window. With it, the output's end, the exit once the
// session has ended, and a channel closed when any of them changes.
func (h *Host) window(off uint64, max int) (parts [][]byte, end uint64, exit *wire.Exit, changed chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	end, exit, changed = h.end, h.exit, h.changed
	if off >= end {
		return nil, end, exit, changed
	}
	return h.win.Read(off, max), end, exit, changed
}

// unlogged reports whether the bytes from off, which the log l does not
// have, will never be readable (catchup.Next): the holder's log stopped
// before them, or the session ended before its holder logged them. A
// reader this far behind skips them, up to the returned offset. Once
// logging resumes, the log itself records them as a gap.
func (h *Host) unlogged(l *outlog.Log, off uint64) (to uint64, ok bool) {
	step := catchup.Next(h.atLogEnd(l, off))
	return step.SkipTo, !step.Wait
}

// atLogEnd is what the host knows when the log l has no byte at off.
func (h *Host) atLogEnd(l *outlog.Log, off uint64) catchup.AtLogEnd {
	l.Refresh()
	logEnd := l.End()
	h.mu.Lock()
	defer h.mu.Unlock()
	s := catchup.AtLogEnd{
		Off: off, End: h.end, LogEnd: logEnd, Ended: h.exit != nil,
		LogStopped: h.reports.log.Stopped, StoppedAt: h.reports.log.At,
	}
	if h.win.Len() > 0 {
		s.WindowFirst, s.WindowEnd = h.win.First(), h.win.End()
	}
	return s
}

// draining reports whether the server is still taking in a backlog from
// the holder: the log on disk is more than a window ahead of what the
// holder has sent. After the server was stopped (SIGSTOP, a long GC pause,
// a suspended VM), the holder logged on and sends it all at once.
func (h *Host) draining() bool {
	l, err := h.outlog()
	if err != nil || l.Refresh() != nil {
		return false
	}
	h.mu.Lock()
	end := h.end
	h.mu.Unlock()
	return l.End() > end+recentCap
}

// shrinkWindow drops the oldest chunks of the window while more than keep
// bytes would remain.
func (h *Host) shrinkWindow(keep int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if freed := h.win.Shrink(keep); freed > 0 {
		idleMemory.freed(freed)
	}
}

// idleMemory hands memory back to the system once sessions go quiet. The
// windows they let go of are garbage only once the collector has run, and
// the runtime returns free pages slowly: an idle server would keep them
// resident for minutes. A second after the last of a wave of trims (and at
// most every 10 s), it collects and returns what is free.
var idleMemory releaser

type releaser struct {
	mu      sync.Mutex
	pending int         // bytes let go of since the last release
	timer   *time.Timer // the release to come, once one is due
	last    time.Time
}

const (
	releaseMin   = 4 << 20 // bytes worth a collection
	releaseQuiet = time.Second
	releaseGap   = 10 * time.Second
)

func (r *releaser) freed(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending += n
	if r.pending < releaseMin {
		return
	}
	wait := max(releaseQuiet, releaseGap-time.Since(r.last))
	if r.timer == nil {
		r.timer = time.AfterFunc(wait, r.release)
	} else {
		r.timer.Reset(wait)
	}
}

func (r *releaser) release() {
	r.mu.Lock()
	r.pending, r.timer, r.last = 0, nil, time.Now()
	r.mu.Unlock()
	debug.FreeOSMemory()
}
