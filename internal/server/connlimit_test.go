package server

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// The gate's decisions, step by step: each step is an accept ("+src",
// "+src!" without a spare descriptor), an authentication ("auth N") or a
// close ("close N"), and what it must decide: the new id or "refused", and
// the ids evicted.
func TestConnGate(t *testing.T) {
	for _, tc := range []struct {
		name            string
		total, perSrc   int
		steps, want     []string
		unauthenticated int
	}{{
		name: "under the caps everything is kept", total: 4, perSrc: 2,
		steps: []string{"+a", "+b", "+a"},
		want:  []string{"1", "2", "3"}, unauthenticated: 3,
	}, {
		name: "at the total cap the oldest goes, not the newest", total: 3, perSrc: 3,
		steps: []string{"+a", "+b", "+c", "+d", "+d"},
		want:  []string{"1", "2", "3", "4 evict 1", "5 evict 2"}, unauthenticated: 3,
	}, {
		name: "one source churns only its own connections", total: 10, perSrc: 2,
		steps: []string{"+owner", "+evil", "+evil", "+evil", "+evil", "+evil"},
		want:  []string{"1", "2", "3", "4 evict 2", "5 evict 3", "6 evict 4"}, unauthenticated: 3,
	}, {
		name: "loopback is one source under the total cap alone", total: 3, perSrc: 1,
		steps: []string{"+loopback", "+loopback", "+loopback", "+loopback"},
		want:  []string{"1", "2", "3", "4 evict 1"}, unauthenticated: 3,
	}, {
		name: "an authenticated connection leaves the gate and is never evicted", total: 2, perSrc: 2,
		steps: []string{"+a", "auth 1", "+a", "+a", "+a"},
		want:  []string{"1", "", "2", "3", "4 evict 2"}, unauthenticated: 2,
	}, {
		name: "closed connections free their place", total: 2, perSrc: 2,
		steps: []string{"+a", "+a", "close 1", "+a"},
		want:  []string{"1", "2", "", "3"}, unauthenticated: 2,
	}, {
		name: "no spare descriptor: the oldest unauthenticated gives its own", total: 10, perSrc: 10,
		steps: []string{"+a", "+b", "auth 1", "+c!"},
		want:  []string{"1", "2", "", "3 evict 2"}, unauthenticated: 1,
	}, {
		name: "no spare descriptor and none to take: refused", total: 10, perSrc: 10,
		steps: []string{"+a", "auth 1", "+b!", "+c"},
		want:  []string{"1", "", "refused", "2"}, unauthenticated: 1,
	}, {
		name: "no spare descriptor at a source's cap: one eviction is enough", total: 10, perSrc: 1,
		steps: []string{"+a", "+b", "+a!"},
		want:  []string{"1", "2", "3 evict 1"}, unauthenticated: 2,
	}, {
		name: "unknown, repeated and evicted ids are harmless", total: 2, perSrc: 2,
		steps: []string{"auth 9", "close 9", "+a", "+a", "+a", "auth 1", "close 1", "close 1", "auth 3", "auth 3"},
		want:  []string{"", "", "1", "2", "3 evict 1", "", "", "", "", ""}, unauthenticated: 1,
	}, {
		name: "caps of zero are one", total: 0, perSrc: 0,
		steps: []string{"+a", "+b"},
		want:  []string{"1", "2 evict 1"}, unauthenticated: 1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := newConnGate(tc.total, tc.perSrc)
			now := time.Unix(1000, 0)
			for i, step := range tc.steps {
				now = now.Add(time.Millisecond)
				got := ""
				switch {
				case strings.HasPrefix(step, "+"):
					src, full := strings.CutSuffix(step[1:], "!")
					id, keep, evict := g.admit(src, now, !full)
					if !keep {
						got = "refused"
						if len(evict) > 0 {
							got += fmt.Sprint(" evict", evict)
						}
						break
					}
					got = fmt.Sprint(id)
					for _, e := range evict {
						got += fmt.Sprint(" evict ", e)
					}
				case strings.HasPrefix(step, "auth "):
					var id uint64
					fmt.Sscan(step[5:], &id)
					g.authenticated(id)
				case strings.HasPrefix(step, "close "):
					var id uint64
					fmt.Sscan(step[6:], &id)
					g.closed(id)
				}
				if got != tc.want[i] {
					t.Fatalf("step %d %q: %q, want %q", i, step, got, tc.want[i])
				}
			}
			if n := g.unauthenticated(); n != tc.unauthenticated {
				t.Errorf("%d unauthenticated at the end, want %d", n, tc.unauthenticated)
			}
			var sum int
			for _, n := range g.bySource {
				sum += n
			}
			if sum != len(g.waiting) {
				t.Errorf("per-source counts add up to %d for %d connections", sum, len(g.waiting))
			}
		})
	}
}

// A clock that goes back (or stands still) does not make the gate evict a
// newer connection before an older one.
func TestConnGateClockBack(t *testing.T) {
	g := newConnGate(2, 2)
	now := time.Unix(1000, 0)
	a, _, _ := g.admit("x", now, true)
	b, _, _ := g.admit("x", now, true) // same instant
	_, _, evict := g.admit("x", now, true)
	if !slices.Equal(evict, []uint64{a}) {
		t.Fatalf("same instant: evicted %v, want [%d]", evict, a)
	}
	_, _, evict = g.admit("x", now.Add(-time.Hour), true)
	if !slices.Equal(evict, []uint64{b}) {
		t.Fatalf("clock back: evicted %v, want [%d]", evict, b)
	}
}

func TestSourceOf(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 5}, loopbackSource},
		{&net.TCPAddr{IP: net.ParseIP("127.8.9.1"), Port: 5}, loopbackSource},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 5}, loopbackSource},
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 5}, "192.0.2.7"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:192.0.2.7"), Port: 5}, "192.0.2.7"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:aaaa::1"), Port: 5}, "2001:db8:1:2::/64"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:bbbb::9"), Port: 6}, "2001:db8:1:2::/64"},
		{nil, ""},
	} {
		if got := sourceOf(tc.addr); got != tc.want {
			t.Errorf("sourceOf(%v) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

func TestUnauthCapsAndReserve(t *testing.T) {
	for _, tc := range []struct {
		limit      uint64
		total, per int
		reserve    uint64
	}{
		{0, 1024, 128, 0}, // unknown: no reserve is kept (room says yes)
		{64, 32, 8, 32},
		{100, 32, 8, 50},
		{256, 32, 8, 64},
		{1024, 128, 16, 64},
		{4096, 512, 64, 204},
		{1 << 20, 1024, 128, 52428},
	} {
		total, per := unauthCaps(tc.limit)
		if total != tc.total || per != tc.per || fdReserve(tc.limit) != tc.reserve {
			t.Errorf("limit %d: caps %d/%d, reserve %d; want %d/%d, %d", tc.limit, total, per, fdReserve(tc.limit), tc.total, tc.per, tc.reserve)
		}
	}
}
