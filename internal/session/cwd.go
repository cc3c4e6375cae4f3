package session

import (
	"context"
	"time"

	"termkeep/internal/procinfo"
	"termkeep/internal/screen"
	"termkeep/internal/wire"
)

// cwdEvery bounds how often the working directory is looked up: at most
// once a second, and only when output arrives (a shell prints a prompt
// after every cd).
const cwdEvery = time.Second

// cwdTracker follows the session's working directory from the two places
// that tell it: OSC 7 in the output (what the shell says; parsed by the
// screen model, across chunk boundaries) and the child's /proc entry (what
// the kernel says, with no help from the shell). Whichever changed last wins.
type cwdTracker struct {
	last     time.Time
	running  bool
	trailing bool   // a lookup is scheduled for when the throttle allows it
	cwd      string // the session's directory as last reported
	fromOSC  string // the last value seen from each source
	fromProc string
	notify   func(dir string) // called when the directory changes (Config.OnCwd); fixed
}

// maybeCheckCwd starts a lookup when one is due. It runs on readHolder's
// goroutine and never blocks it. It paces /proc reads with a real timer,
// so on real time, not the host's clock.
func (h *Host) maybeCheckCwd() {
	h.mu.Lock()
	t := &h.cwdT
	if wait := cwdEvery - time.Since(t.last); t.running || wait > 0 {
		// Too soon: look once more when the second is up, so the output
		// that follows a cd (its prompt) is never the last one unchecked.
		if !t.trailing {
			t.trailing = true
			time.AfterFunc(max(wait, 50*time.Millisecond), func() {
				h.mu.Lock()
				h.cwdT.trailing = false
				h.mu.Unlock()
				h.maybeCheckCwd()
			})
		}
		h.mu.Unlock()
		return
	}
	t.running, t.last = true, time.Now()
	pid := h.pid
	h.mu.Unlock()
	go h.checkCwd(pid)
}

func (h *Host) checkCwd(pid int) {
	// The model runs a little behind the output; let it reach what has
	// arrived so an OSC 7 in it counts now.
	var osc string
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	h.startModel().at(ctx, h.Info().End, func(scr *screen.Screen, _ uint64) { osc = oscCwd(scr) })
	cancel()
	var proc string
	if pid > 0 {
		proc, _ = procinfo.Cwd(pid)
	}
	h.mu.Lock()
	t := &h.cwdT
	t.running = false
	next := t.cwd
	if proc != "" && proc != t.fromProc {
		t.fromProc, next = proc, proc
	}
	if osc != "" && osc != t.fromOSC {
		t.fromOSC, next = osc, osc
	}
	changed := next != "" && next != t.cwd
	if changed {
		t.cwd = next
	}
	up := h.up
	onCwd := h.cwdT.notify
	h.mu.Unlock()
	if !changed {
		return
	}
	if up != nil {
		// For meta.json; a holder too old to take it leaves its own there,
		// and the registry has the new one (onCwd).
		up.frame(wire.TypeCwd, []byte(next))
	}
	if onCwd != nil {
		onCwd(next)
	}
}

// oscCwd is the model's OSC 7 directory; the screen model keeps only local
// paths.
func oscCwd(scr *screen.Screen) string { return scr.Cwd() }

// Cwd returns the session's working directory as last seen ("" before the
// first lookup).
func (h *Host) Cwd() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cwdT.cwd
}
