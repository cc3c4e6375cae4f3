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
	at       atomic.Int64  // when the forwarder last sent output (UnixNano)
	progress chan struct{} // one slot: the forwarder sent output
	free     atomic.Bool   // the child is gone: never wait
}

func newRelay(l *outlog.Log) *relay {
	return &relay{log: l, maxLag: uint64(min(relayLagMax, l.Retention())), progress: make(chan struct{}, 1)}
}

// sent records that the server was sent the output below off: retention
// counts back from there (outlog.Log.Hold), and a waiting reader looks again.
func (r *relay) sent(off uint64) {
	r.log.Hold(off)
	r.at.Store(time.Now().UnixNano())
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

// wait returns once the reader may read the pty again: the server is at
// most maxLag behind the log, or has taken nothing for relayStall, or there
// is no server, or the child has exited.
func (r *relay) wait() {
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		held, ok := r.log.Held()
		if !ok || r.free.Load() {
			return
		}
		if end := r.log.End(); end-min(held, end) <= r.maxLag {
			return
		}
		idle := time.Since(time.Unix(0, r.at.Load()))
		if idle >= relayStall {
			return
		}
		if t == nil {
			t = time.NewTimer(relayStall - idle)
		} else {
			t.Reset(relayStall - idle)
		}
		select {
		case <-r.progress:
		case <-t.C:
		}
	}
}
