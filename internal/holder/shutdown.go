package holder

import (
	"errors"
	"time"

	"termkeep/internal/outlog"
)

// prepareShutdown records that the machine is shutting down (on), as the
// server heard from logind, or that the shutdown was cancelled: in
// meta.json and the status record, so that the end the shutdown's
// signals bring is recorded as the shutdown's (judgeEnd, ended), and a
// holder killed before it records any end leaves the mark for the next
// server. The log is synced first: the SIGKILL that ends a shutdown may
// leave no time later. It returns once both are written (or failed).
func (h *holder) prepareShutdown(on bool) {
	h.mu.Lock()
	if h.exited || (on == (h.meta.ShutdownAt != nil)) {
		h.mu.Unlock()
		if on {
			h.syncLog()
		}
		return
	}
	if on {
		at := time.Now().UTC()
		h.meta.ShutdownAt = &at
	} else {
		h.meta.ShutdownAt = nil
	}
	h.mu.Unlock()
	if on {
		h.log.Info("the machine is shutting down: the log is synced and the coming end recorded as the shutdown's")
		h.syncLog()
	} else {
		h.log.Info("the machine's shutdown was cancelled")
	}
	// meta.json as it is when written, not as it was above: an end
	// recorded meanwhile must not be written over by a running one.
	h.metaMu.Lock()
	defer h.metaMu.Unlock()
	h.mu.Lock()
	meta := h.meta
	h.mu.Unlock()
	if serr, merr := h.writeRecordsLocked(meta); serr != nil && merr != nil {
		h.log.Error("record the coming shutdown", "status_err", serr, "meta_err", merr)
	}
}

func (h *holder) syncLog() {
	if err := h.out.Sync(); err != nil && !errors.Is(err, outlog.ErrClosed) {
		h.log.Error("sync output log", "err", err)
	}
}
