package holder

import (
	"fmt"
	"syscall"
	"time"
)

// Who ended the session: its user (a close on purpose), the machine or
// service stopping (SIGTERM to the holder), or the child itself. What
// comes back after a restart depends on it (package restorepolicy).

// stopWindow is how far apart a child's death and its holder's SIGTERM may
// be and still be one stop. systemd signals every process of a shutdown
// at once, in no set order, and the holder may take its SIGTERM after a
// child that died of the same stop has been reaped.
const stopWindow = 2 * time.Second

// stopReason is what an interrupted session says when its holder was
// stopped by SIGTERM; shutdownReason, when the server had said the
// machine is shutting down (a shutdown frame).
const (
	stopReason     = "stopped by SIGTERM: the machine or service stopping"
	shutdownReason = "stopped by SIGTERM: the machine shutting down"
)

// endFacts is what the holder knows when its child has ended.
type endFacts struct {
	closing bool      // a close on purpose was asked (Close frame, CloseSignal)
	stopAt  time.Time // when the holder got SIGTERM; zero: it has not
	died    time.Time // when the child was reaped
	code    int       // its status as a shell reports it (128+N: signal N)
	sig     int       // the signal that killed it; 0: it exited
	// shutdown: the server said the machine is shutting down (meta.json's
	// shutdown_at); it changes only the reason an interrupted end gives.
	shutdown bool
}

// judgeEnd decides, at now, how the session ended: "closed", "exited", or
// "interrupted" with the reason to show. With wait > 0 it cannot tell yet:
// the child died of a signal a stop sends, and the holder's own SIGTERM
// may still come within stopWindow of that death; judge again after wait,
// or as soon as SIGTERM comes.
//
// A close on purpose is "closed" whatever else happened. Exit status 0
// is the child saying it finished its work, whenever it came: "exited",
// so that a job that completed as the machine stopped is never run again
// by a restore. Otherwise, after the holder's SIGTERM the child's end is
// the stop's: the holder hung it up, and a program may answer SIGHUP
// with a status of its own (zsh and fish exit 129). A child that died of
// SIGTERM, SIGHUP or SIGKILL within stopWindow before the holder's
// SIGTERM died of the same stop. Any other end is the child's own:
// "exited".
func judgeEnd(f endFacts, now time.Time) (state, reason string, wait time.Duration) {
	stopReason := stopReason
	if f.shutdown {
		stopReason = shutdownReason
	}
	switch {
	case f.closing:
		return "closed", "", 0
	case f.code == 0 && f.sig == 0:
		return "exited", "", 0
	case !f.stopAt.IsZero() && !f.died.Before(f.stopAt):
		return "interrupted", stopReason, 0
	case !killedByStop(f.code, f.sig):
		return "exited", "", 0
	case !f.stopAt.IsZero():
		if before := f.stopAt.Sub(f.died); before <= stopWindow {
			return "interrupted", fmt.Sprintf("%s (its process had died of %s %.1f s before)", stopReason, signalName(f.code, f.sig), before.Seconds()), 0
		}
		return "exited", "", 0
	}
	if left := f.died.Add(stopWindow).Sub(now); left > 0 {
		return "", "", left
	}
	return "exited", "", 0
}

// killedByStop reports whether a child with status code, killed by sig,
// died of a signal a stopping machine or service sends: SIGTERM, then
// SIGKILL for what is left, and SIGHUP (systemd's SendSIGHUP=, or a
// terminal that went away). A shell that runs the program as its job
// reports the same death as status 128+N.
func killedByStop(code, sig int) bool {
	if sig == 0 && code > 128 {
		sig = code - 128
	}
	switch syscall.Signal(sig) {
	case syscall.SIGTERM, syscall.SIGHUP, syscall.SIGKILL:
		return true
	}
	return false
}

// signalName names the signal of a death killedByStop accepts.
func signalName(code, sig int) string {
	if sig == 0 {
		sig = code - 128
	}
	switch syscall.Signal(sig) {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGKILL:
		return "SIGKILL"
	}
	return fmt.Sprintf("signal %d", sig)
}
