package main

import (
	"context"
	"fmt"
	"time"
)

// idleSessions is how many idle sessions the memory figure is taken over.
const idleSessions = 10

// idleSettle is how long the idle sessions sit before their memory is read:
// long enough for start-up garbage to be collected and the holders to be as
// they would be after minutes of idling, short enough for the bench.
const idleSettle = 3 * time.Second

// idleResult is the memory of idle holders and of the server hosting them.
type idleResult struct {
	holders []memory
	server  memory
	err     error // set when the figures are unavailable
}

// measureIdle starts idleSessions sessions whose child sleeps and reads each
// holder's smaps_rollup.
func measureIdle(ctx context.Context, bin string) idleResult {
	srv, err := startServer(ctx, bin)
	if err != nil {
		return idleResult{err: err}
	}
	defer srv.close()
	var pids []int
	for i := range idleSessions {
		_, pid, err := srv.create(ctx, fmt.Sprintf("idle%d", i), []string{"sleep", "3600"})
		if err != nil {
			return idleResult{err: err}
		}
		pids = append(pids, pid)
	}
	select {
	case <-ctx.Done():
		return idleResult{err: ctx.Err()}
	case <-time.After(idleSettle):
	}
	var r idleResult
	for _, pid := range pids {
		m, err := procMemory(pid)
		if err != nil {
			return idleResult{err: err}
		}
		r.holders = append(r.holders, m)
	}
	if r.server, err = procMemory(srv.pid()); err != nil {
		return idleResult{err: err}
	}
	return r
}
