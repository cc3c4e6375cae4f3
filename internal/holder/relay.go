package holder

import (
	"sync/atomic"
	"time"

	"termkeep/internal/outlog"
)

// The server's pace. The pty is read at the child's pace, and the log keeps
// whatever the server has not taken yet, so a server that falls behind
// costs the holder nothing. But a server that cannot keep up with a flood at
// all (too little CPU for its viewers) would fall behind without bound, and
// once it is more than the log's retention behind, the bytes its own viewers
// still need are deleted under them: every viewer loses them at once,
// however fast it reads. So while the server is more than relayLagMax
// behind and still taking output, the reader waits for it, as a terminal
// that cannot keep up makes its program wait. A server that takes nothing
// for relayStall (stopped, hung, gone) is not waited for: the child runs on
// and the log's retention decides what is kept. Nor is anyone waited for
// once the child has exited: its last bytes go to the log at once.
const (
	relayLagMax = 8 << 20
	relayStall  = 500 * time.Millisecond
)

// relay is what the pty's reader knows of the forwarder's progress.
type relay struct {
	log      *outlog.Log
	maxLag   uint64
	base     time.Time     // at counts from here, on the monotonic clock
	at       atomic.Int64  // when the forwarder last sent output: nanoseconds after base
	progress chan struct{} // one slot: the forwarder sent output
	free     atomic.Bool   // the child is gone: never wait
}

func newRelay(l *outlog.Log) *relay {
	return &relay{log: l, maxLag: uint64(min(relayLagMax, l.Retention())), base: time.Now(), progress: make(chan struct{}, 1)}
}

// sent records that the server was sent the output below off at now:
// retention counts back from there (outlog.Log.Hold), and a waiting reader
// looks again.
func (r *relay) sent(off uint64, now time.Time) {
	r.log.Hold(off)
	r.at.Store(int64(now.Sub(r.base)))
	r.nudge()
}

// childGone lets the reader read freely from now on.
func (r *relay) childGone() {
	r.free.Store(true)
	r.nudge()
}

// nudge makes a waiting reader look again, without blocking.
func (r *relay) nudge() {
	select {
	case r.progress <- struct{}{}:
	default:
	}
}

// wait returns once the reader may read the pty again (see pause), waking
// to look again whenever the forwarder sends output.
func (r *relay) wait() {
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		d := r.pause(time.Now())
		if d == 0 {
			return
		}
		if t == nil {
			t = time.NewTimer(d)
		} else {
			t.Reset(d)
		}
		select {
		case <-r.progress:
		case <-t.C:
		}
	}
}

// pause is how long, at now, the reader should wait before it looks
// again: 0 to read now.
func (r *relay) pause(now time.Time) time.Duration {
	held, ok := r.log.Held()
	return relayPause(relayState{
		server: ok, held: held, end: r.log.End(), maxLag: r.maxLag, childGone: r.free.Load(),
		idle: now.Sub(r.base) - time.Duration(r.at.Load()),
	})
}

// relayState is what the reader's pause depends on.
type relayState struct {
	server    bool          // a server is connected (the log is held for it)
	held      uint64        // what the server has been sent: the log below it
	end       uint64        // the log's end
	maxLag    uint64        // how far behind the server may be without the reader waiting
	childGone bool          // the child has exited
	idle      time.Duration // since the server was last sent output
}

// relayPause decides the reader's pause: none when there is no server, the
// child is gone, the server is at most maxLag behind, or it has taken
// nothing for relayStall; else until relayStall has passed (a nudge wakes
// the reader sooner). A server that claims more than the log holds is
// not behind, and an idle time below zero (output sent after now was
// read) counts as none, so the pause never exceeds relayStall.
func relayPause(s relayState) time.Duration {
	if !s.server || s.childGone {
		return 0
	}
	if s.end-min(s.held, s.end) <= s.maxLag {
		return 0
	}
	idle := max(s.idle, 0)
	if idle >= relayStall {
		return 0
	}
	return relayStall - idle
}
