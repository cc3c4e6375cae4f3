package server

import (
	"net"
	"time"
)

// connGate decides which connections the browser listener keeps while they
// are unauthenticated: from the moment they are accepted until a request
// on them passes the guard. It holds no connection and does no I/O; the
// listener (gatelistener.go) calls it under its lock and closes what it
// says. Time is passed in.
//
// At a cap, the oldest unauthenticated connection makes room for the new
// one; the new one is never the one refused while an older one can go.
// Refusing the newest would let whoever holds the cap keep everyone else
// out for as long as they like, the owner's browser included. Evicting the
// oldest means a flood only churns through its own connections: a
// browser's connection carries its request within milliseconds of being
// accepted and leaves the gate then, so to evict it an attacker must open
// a whole cap's worth of connections in that moment. The connections it
// does evict are the ones that have waited longest without proving
// anything, which a legitimate client never does.
//
// The per-source cap keeps one address (an IPv6 /64) from churning out
// the connections of others. On loopback every local user is the same
// source (and any 127.x address reaches the listener), so there it would
// only be a smaller total cap: loopback sources share the total cap alone.
type connGate struct {
	// maxUnauth bounds the unauthenticated connections in all; perSource
	// those of one non-loopback source. Both at least 1.
	maxUnauth, perSource int

	next     uint64
	waiting  map[uint64]gateEntry // the unauthenticated connections
	bySource map[string]int       // how many of waiting each source has
}

type gateEntry struct {
	source string
	since  time.Time
}

// loopbackSource is the one source every loopback address counts as.
const loopbackSource = "loopback"

func newConnGate(maxUnauth, perSource int) *connGate {
	g := &connGate{waiting: map[uint64]gateEntry{}, bySource: map[string]int{}}
	g.setCaps(maxUnauth, perSource)
	return g
}

// setCaps changes the caps; connections over a lowered cap stay until the
// next admit evicts them.
func (g *connGate) setCaps(maxUnauth, perSource int) {
	g.maxUnauth, g.perSource = max(maxUnauth, 1), max(perSource, 1)
}

// admit decides on a connection just accepted from source (sourceOf). room
// says whether the process has a descriptor to spare for it beyond its
// reserve. It returns the new connection's id and whether to keep it, and
// the unauthenticated connections to close first. Without room, the oldest
// unauthenticated connection gives up its descriptor; with none to give,
// the new one is refused.
func (g *connGate) admit(source string, now time.Time, room bool) (id uint64, keep bool, evict []uint64) {
	if source != loopbackSource && g.bySource[source] >= g.perSource {
		if old, ok := g.oldest(source); ok {
			evict = append(evict, old)
			g.remove(old)
		}
	}
	for len(g.waiting) >= g.maxUnauth || (!room && len(evict) == 0) {
		old, ok := g.oldest("")
		if !ok {
			break
		}
		evict = append(evict, old)
		g.remove(old)
	}
	if !room && len(evict) == 0 {
		return 0, false, nil
	}
	g.next++
	g.waiting[g.next] = gateEntry{source: source, since: now}
	g.bySource[source]++
	return g.next, true, evict
}

// authenticated takes connection id out of the gate: a request on it
// passed the guard. Unknown ids (already authenticated, evicted or closed)
// are ignored.
func (g *connGate) authenticated(id uint64) { g.remove(id) }

// closed forgets connection id, whatever its state.
func (g *connGate) closed(id uint64) { g.remove(id) }

// unauthenticated is how many connections wait in the gate.
func (g *connGate) unauthenticated() int { return len(g.waiting) }

func (g *connGate) remove(id uint64) {
	e, ok := g.waiting[id]
	if !ok {
		return
	}
	delete(g.waiting, id)
	if g.bySource[e.source]--; g.bySource[e.source] <= 0 {
		delete(g.bySource, e.source)
	}
}

// oldest returns the unauthenticated connection accepted first, of source
// (any source when ""). Ids grow with time, so they break ties.
func (g *connGate) oldest(source string) (uint64, bool) {
	var best uint64
	var bestAt time.Time
	found := false
	for id, e := range g.waiting {
		if source != "" && e.source != source {
			continue
		}
		if !found || e.since.Before(bestAt) || (e.since.Equal(bestAt) && id < best) {
			best, bestAt, found = id, e.since, true
		}
	}
	return best, found
}

// sourceOf is the source a connection from addr counts against: its IP, an
// IPv6 address's /64 (addrKey, as wrong tokens are counted), and every
// loopback address as one.
func sourceOf(addr net.Addr) string {
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsLoopback() {
		return loopbackSource
	}
	if addr == nil {
		return ""
	}
	return addrKey(addr.String())
}

// unauthCaps are the gate's caps for a process that may have limit open
// descriptors: an eighth of them unauthenticated (at least 32, at most
// 1024), and an eighth of that for one source (at least 8). limit 0 means
// unknown or unlimited.
func unauthCaps(limit uint64) (total, perSource int) {
	total = 1024
	if limit > 0 && limit/8 < 1024 {
		total = max(int(limit/8), 32)
	}
	return total, max(total/8, 8)
}

// fdReserve is how many descriptors the browser listener leaves free for
// the rest of the server (the unix socket and its CLI requests, the
// holders' sockets and logs, the registry) out of limit: 64, or 5% of a
// larger limit, and never more than half a small one.
func fdReserve(limit uint64) uint64 {
	return min(max(64, limit/20), limit/2)
}
