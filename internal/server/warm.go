package server

import (
	"context"
	"runtime"
	"sync"
	"time"

	"termkeep/internal/session"
)

// warmScreens readies the screens of ended sessions in the background as
// the server starts. A session that ended while no server ran (every
// session after a reboot, or a build that finished while the server was
// down) has a screen checkpoint behind the end of its log, or none, and
// its first capture, attach or read_screen would replay that much output
// first: up to the whole log, 64 MiB or more. Those whose replay is worth
// it (session.Host.NeedsCatchUp) are caught up here, and their checkpoint
// written at the end, so that the first request reads the checkpoint
// alone. A request that comes first does not wait for this: it starts the
// same model itself.
//
// Half the CPUs work at it, so running sessions and requests keep the
// rest; it stops when ctx ends (the server closes).
func (s *Server) warmScreens(ctx context.Context, hosts []*session.Host) {
	if len(hosts) == 0 {
		return
	}
	start := time.Now()
	work := make(chan *session.Host)
	var wg sync.WaitGroup
	var mu sync.Mutex
	warmed := 0
	for range max(1, runtime.GOMAXPROCS(0)/2) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range work {
				if ctx.Err() != nil || !h.NeedsCatchUp() {
					continue
				}
				h.CatchUp(ctx)
				mu.Lock()
				warmed++
				mu.Unlock()
			}
		}()
	}
	for _, h := range hosts {
		work <- h
	}
	close(work)
	wg.Wait()
	if warmed > 0 && ctx.Err() == nil {
		s.log.Info("ended sessions' screens caught up with their logs", "sessions", warmed, "took", time.Since(start).Round(time.Millisecond))
	}
}
