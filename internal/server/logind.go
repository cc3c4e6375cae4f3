package server

// Getting ready for the machine's shutdown where logind runs: a delay
// inhibitor lock, and on PrepareForShutdown every running session's log
// synced, screen checkpointed and coming end recorded as the shutdown's
// before the signals come (package logind decides when).

import (
	"context"
	"sync"
	"time"

	"termkeep/internal/logind"
)

// watchShutdown watches logind on the system bus (DBUS_SYSTEM_BUS_ADDRESS,
// or the usual socket) until the returned function is called; without a
// bus it logs one line and does nothing.
func (s *Server) watchShutdown() (stop func()) {
	return logind.Start(logind.SystemBusAddress(), logind.Options{Prepare: s.prepareShutdown, Log: s.log})
}

// prepareShutdown readies every running session for the machine's
// shutdown (on), or tells each it was cancelled, all at once; it returns
// when every holder has answered or ctx ends. A holder that predates the
// shutdown frame records the shutdown's SIGTERM as an ordinary stop.
func (s *Server) prepareShutdown(ctx context.Context, on bool) {
	start := time.Now()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ready    int
		notReady []string
		firstErr error
	)
	for _, h := range s.allHosts() {
		if h.Exit() != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := h.PrepareShutdown(ctx, on)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				notReady = append(notReady, h.ID)
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			ready++
		}()
	}
	wg.Wait()
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case !on:
		s.log.Info("the machine's shutdown was cancelled: sessions told", "sessions", ready, "not_told", len(notReady))
	case len(notReady) > 0:
		s.log.Warn("the machine is shutting down: some sessions could not be readied; their holders' SIGTERM still records them interrupted",
			"ready", ready, "not_ready", notReady, "err", firstErr, "took", took)
	default:
		s.log.Info("the machine is shutting down: every session is ready", "sessions", ready, "took", took)
	}
}
