package session

import "sync/atomic"

// Meter totals what a set of hosts carry, for the server's metrics. Every
// host made with the same Meter (Config.Meter) adds to it as it goes, so
// the totals keep what a host counted after the host is removed or
// replaced (a restore makes a new host): they only grow, as Prometheus
// counters must.
//
// Each count is one atomic add where it happens: no lock, no allocation,
// also on the output path. The zero value is ready to use; its fields are
// safe for concurrent use.
type Meter struct {
	// InputBytes is the input written to holders (viewers' keystrokes and
	// answers, send, the HTTP input call).
	InputBytes atomic.Uint64
	// OutputBytes is the output received from holders, duplicates after a
	// reconnect left out.
	OutputBytes atomic.Uint64
	// Resyncs counts viewers skipped to the present with a snapshot.
	Resyncs atomic.Uint64
	// Reconnects counts connections to a holder made again after one
	// dropped while the holder lived.
	Reconnects atomic.Uint64
	// LanesOpened counts the output lanes a holder was asked to open
	// (docs/architecture.md, Lanes); of those that ended,
	// Lanes wrote at least a byte and LanesRefused ended at their start.
	// LaneBytes is the output lanes wrote to viewers' terminals.
	LanesOpened, Lanes, LaneBytes, LanesRefused atomic.Uint64
	// LaneTyped is the input holders wrote to ptys from input lanes'
	// terminals themselves (counted in InputBytes too), and LaneHandBacks
	// the reads they handed back to be taken as typed.
	LaneTyped, LaneHandBacks atomic.Uint64
}

// Counters are what one host has counted since it was made.
type Counters struct {
	InputBytes uint64 // input written to the holder
	Resyncs    uint64 // viewers skipped to the present with a snapshot
	Reconnects uint64 // holder connections made again after a drop
}

// Counters returns the host's counts.
func (h *Host) Counters() Counters {
	return Counters{InputBytes: h.counts.inBytes.Load(), Resyncs: h.counts.resyncs.Load(), Reconnects: h.counts.reconnects.Load()}
}

// hostCounts is what one host counts for its Counters, as the meter's
// totals do: an atomic add where it happens.
type hostCounts struct {
	inBytes    atomic.Uint64 // input written to the holder
	resyncs    atomic.Uint64 // viewers skipped to the present with a snapshot
	reconnects atomic.Uint64 // holder connections made again after a drop
}
