package flow

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The traces below drive a Progress as the viewer's writer does and pin
// what it decides at each step. A line is a step, "=>" and what it must
// answer:
//
//	new from=N queue=Q [live] [waiter]
//	observe t=T end=E [acked=A] [drain]   => action [state] (+ " ?drain" if Draining was asked)
//	sent N at=T [took=D]                  => next=X
//	skipped TO                            => next=X
//	resynced AT                           => next=X count-drawn|keep-acks
//	gone end=E first=F                    => action
//
// Sizes take K and M (KiB, MiB); times are durations since the start.

func TestTraces(t *testing.T) {
	for _, tc := range []struct{ name, script string }{
		{"a viewer that keeps pace with a flood", `
new from=0 queue=1M live
observe t=0 end=0              => caught-up [streaming]
observe t=10ms end=4M          => send 0 [behind] ?drain
sent 4M at=10ms took=1ms       => next=4194304
observe t=100ms end=8M         => send 4194304 [behind]
sent 3M at=100ms took=1ms      => next=7340032
# judged after 250 ms: 7M read, 5M behind, read within 2 s at that pace
observe t=260ms end=12M        => send 7340032 [behind] ?drain
sent 4M at=260ms took=1ms      => next=11534336
observe t=600ms end=12M        => send 11534336 [streaming]
sent 1M at=600ms took=1ms      => next=12582912
observe t=700ms end=12M        => caught-up [streaming]
`},
		{"a viewer within its queue is never judged", `
new from=0 queue=1M live
observe t=0 end=1M             => send 0 [streaming]
observe t=10s end=1M           => send 0 [streaming]
sent 1M at=10s took=9s         => next=1048576
observe t=20s end=2M           => send 1048576 [streaming]
`},
		{"a viewer that stalls then bursts is not skipped", `
new from=0 queue=1M live
observe t=0 end=0              => caught-up [streaming]
observe t=0 end=8M             => send 0 [behind] ?drain
sent 256K at=0 took=1ms        => next=262144
# starved: at 250 ms and at 900 ms it has read too little to keep pace,
# but it has not been slow for a second
observe t=250ms end=8M         => send 262144 [behind]
observe t=900ms end=8M         => send 262144 [behind]
sent 7936K at=900ms took=50ms  => next=8388608
observe t=960ms end=8M         => caught-up [streaming]
`},
		{"a viewer that stopped is skipped after a second", `
new from=0 queue=1M live
observe t=0 end=4M             => send 0 [behind] ?drain
sent 256K at=0 took=1ms        => next=262144
observe t=250ms end=4M         => send 262144 [behind]
observe t=999ms end=4M         => send 262144 [behind]
observe t=1s end=4M            => resync behind=3932160 read=262144 over=1s [behind]
resynced 4M                    => next=4194304 count-drawn
observe t=1s end=4M            => caught-up [streaming]
# falling behind again starts a new judgement
observe t=2s end=6M            => send 4194304 [behind] ?drain
`},
		{"a browser drawing a tenth of a flood is skipped", `
new from=0 queue=1M live
observe t=0 end=15M            => send 0 [behind] ?drain
sent 1536K at=0 took=1ms       => next=1572864
observe t=250ms end=30M        => send 1572864 [behind]
sent 1536K at=250ms took=1ms   => next=3145728
observe t=500ms end=45M        => send 3145728 [behind]
sent 1536K at=500ms took=1ms   => next=4718592
observe t=750ms end=60M        => send 4718592 [behind]
sent 1536K at=750ms took=1ms   => next=6291456
observe t=1s end=75M           => resync behind=72351744 read=6291456 over=1s [behind]
`},
		{"a viewer that reads slowly but steadily catches up", `
new from=0 queue=1M live
observe t=0 end=8M             => send 0 [behind] ?drain
sent 1M at=0 took=1ms          => next=1048576
# 7M behind, 1M read in 250 ms: 1.75 s to read the rest
observe t=250ms end=8M         => send 1048576 [behind] ?drain
sent 1M at=250ms took=1ms      => next=2097152
observe t=500ms end=8M         => send 2097152 [behind] ?drain
sent 1M at=500ms took=1ms      => next=3145728
observe t=750ms end=8M         => send 3145728 [behind] ?drain
sent 1M at=750ms took=1ms      => next=4194304
observe t=1s end=8M            => send 4194304 [behind] ?drain
sent 1M at=1s took=1ms         => next=5242880
observe t=1250ms end=8M        => send 5242880 [behind] ?drain
sent 1M at=1250ms took=1ms     => next=6291456
observe t=1500ms end=8M        => send 6291456 [behind] ?drain
sent 1M at=1500ms took=1ms     => next=7340032
observe t=1750ms end=8M        => send 7340032 [streaming]
`},
		{"a write blocked for a second while behind", `
new from=0 queue=1M live
observe t=0 end=4M             => send 0 [behind] ?drain
sent 256K at=0 took=1200ms     => next=262144
observe t=1200ms end=4M        => resync behind=3932160 read=262144 over=1.2s blocked [behind]
`},
		{"a write that blocked for a second counts as time behind", `
new from=0 queue=1M live
observe t=0 end=100            => send 0 [streaming]
sent 100 at=0 took=1500ms      => next=100
# it fell behind while the write blocked: behind since the write began
observe t=1500ms end=4M        => resync behind=4194204 read=0 over=1.5s blocked [behind] ?drain
`},
		{"a write that blocked for less than a second does not count", `
new from=0 queue=1M live
observe t=0 end=100            => send 0 [streaming]
sent 100 at=0 took=900ms       => next=100
observe t=900ms end=4M         => send 100 [behind] ?drain
sent 2M at=900ms took=1ms      => next=2097252
# behind since 900 ms, not since the write began, and reading at pace
observe t=1200ms end=4M        => send 2097252 [behind] ?drain
`},
		{"a write that ends blocking lifts the block", `
new from=0 queue=1M live
observe t=0 end=4M             => send 0 [behind] ?drain
sent 256K at=0 took=1100ms     => next=262144
sent 256K at=1100ms took=1ms   => next=524288
# a second went by since it fell behind, reading 512K: slow
observe t=1101ms end=4M        => resync behind=3670016 read=524288 over=1.101s [behind]
`},
		{"a short descheduling does not make a reader slow", `
new from=0 queue=1M live
observe t=0 end=4M             => send 0 [behind] ?drain
sent 3M at=0 took=1ms          => next=3145728
# the writer ran again after 376 ms: one reading of the clock judges it
# keeping pace, so it is not judged slow at the same pass
observe t=376ms end=9M         => send 3145728 [behind] ?drain
`},
		{"a long descheduling is judged over the whole jump", `
new from=0 queue=1M live
observe t=0 end=4M             => send 0 [behind] ?drain
sent 2M at=0 took=1ms          => next=2097152
observe t=5s end=4M            => resync behind=2097152 read=2097152 over=5s [behind]
`},
		{"the server taking in a holder's backlog exempts a viewer that reads", `
new from=0 queue=1M live
observe t=0 end=4M drain       => send 0 [behind] ?drain
observe t=250ms end=4M drain   => send 0 [behind] ?drain
observe t=2s end=4M drain      => send 0 [behind] ?drain
# the drain is over: judged again from the last judgement
observe t=2250ms end=4M        => send 0 [behind] ?drain
observe t=3249ms end=4M        => send 0 [behind]
observe t=3250ms end=4M        => resync behind=4194304 read=0 over=1s [behind]
`},
		{"a drain does not exempt a viewer whose write blocked", `
new from=0 queue=1M live
observe t=0 end=4M drain       => send 0 [behind] ?drain
sent 1M at=0 took=1s           => next=1048576
observe t=1s end=4M drain      => resync behind=3145728 read=1048576 over=1s blocked [behind]
`},
		{"an ack-based viewer waits for its acks", `
new from=0 queue=1M live
observe t=0 end=3M acked=0     => send 0 [behind] ?drain
sent 1M at=0 took=1ms          => next=1048576
observe t=10ms end=3M acked=0  => await-ack [behind]
observe t=100ms end=3M acked=1M => send 1048576 [behind]
sent 1M at=100ms took=1ms      => next=2097152
observe t=200ms end=3M acked=2M => send 2097152 [streaming]
sent 1M at=200ms took=1ms      => next=3145728
observe t=300ms end=3M acked=2M => caught-up [streaming]
`},
		{"an ack-based viewer that stops drawing is skipped", `
new from=0 queue=1M live
observe t=0 end=4M acked=0     => send 0 [behind] ?drain
sent 1M at=0 took=1ms          => next=1048576
observe t=500ms end=4M acked=0 => await-ack [behind]
observe t=1s end=4M acked=0    => resync behind=4194304 read=0 over=1s [behind]
resynced 4M                    => next=4194304 count-drawn
observe t=1s end=4M acked=4M   => caught-up [streaming]
`},
		{"a viewer that acks beyond what it was sent counts for what it accepted", `
new from=0 queue=1M live
observe t=0 end=4M acked=1000M => send 0 [behind] ?drain
sent 256K at=0 took=1ms        => next=262144
observe t=10ms end=4M acked=1000M => send 262144 [behind]
observe t=1s end=4M acked=1000M => resync behind=3932160 read=262144 over=1s [behind]
`},
		{"a backlog asked for is replayed, never judged", `
new from=0 queue=1M
observe t=0 end=100M           => send 0 [replaying]
sent 256K at=0 took=5s         => next=262144
observe t=10s end=100M         => send 262144 [replaying]
sent 102144K at=10s took=1ms   => next=104857600
observe t=11s end=100M         => caught-up [streaming]
observe t=12s end=104M         => send 104857600 [behind] ?drain
`},
		{"a waiter is never judged, and told of gaps", `
new from=0 queue=1M live waiter
observe t=0 end=100M           => send 0 [streaming]
observe t=10s end=100M         => send 0 [streaming]
gone end=100M first=50M        => gap 0-52428800
skipped 50M                    => next=52428800
gone end=100M first=0          => gap 52428800-52428801
skipped 52428801               => next=52428801
gone end=60M first=200M        => gap 52428801-62914560
`},
		{"a viewer whose bytes are gone is resynced, and its acks left alone", `
new from=0 queue=1M
gone end=100M first=50M        => resync behind=104857600 gone first=52428800
resynced 100M                  => next=104857600 keep-acks
observe t=0 end=100M           => caught-up [streaming]
`},
		{"a gap never moves a viewer back", `
new from=1000 queue=1M live
skipped 10                     => next=1000
`},
	} {
		t.Run(tc.name, func(t *testing.T) { runTrace(t, tc.script) })
	}
}

func runTrace(t *testing.T, script string) {
	t.Helper()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var p Progress
	for n, line := range strings.Split(strings.TrimSpace(script), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		step, want, _ := strings.Cut(line, "=>")
		step, want = strings.TrimSpace(step), strings.TrimSpace(want)
		f := strings.Fields(step)
		args := map[string]string{}
		for _, a := range f[1:] {
			k, v, _ := strings.Cut(a, "=")
			args[k] = v
		}
		num := func(k string) uint64 {
			s, ok := args[k]
			if !ok {
				t.Fatalf("line %d: %q lacks %s", n+1, line, k)
			}
			return size(t, s)
		}
		at := func(k string) time.Time {
			d, err := time.ParseDuration(args[k])
			if args[k] == "0" {
				d, err = 0, nil
			}
			if err != nil {
				t.Fatalf("line %d: %s=%q: %v", n+1, k, args[k], err)
			}
			return base.Add(d)
		}
		var got string
		switch f[0] {
		case "new":
			_, live := args["live"]
			_, waiter := args["waiter"]
			p = New(num("from"), live, Config{Queue: num("queue"), Waiter: waiter})
			continue
		case "observe":
			asked := false
			_, drain := args["drain"]
			o := Observation{End: num("end"), Draining: func() bool { asked = true; return drain }}
			if _, ok := args["acked"]; ok {
				o.Acking, o.Acked = true, num("acked")
			}
			a := p.Observe(at("t"), o)
			got = fmt.Sprintf("%s [%s]", a, p.State())
			if asked {
				got += " ?drain"
			}
		case "sent":
			began := at("at")
			done := began
			if _, ok := args["took"]; ok {
				d, err := time.ParseDuration(args["took"])
				if err != nil {
					t.Fatalf("line %d: took: %v", n+1, err)
				}
				done = began.Add(d)
			}
			p.Sent(int(size(t, f[1])), began, done)
			got = fmt.Sprintf("next=%d", p.Next())
		case "skipped":
			p.Skipped(size(t, f[1]))
			got = fmt.Sprintf("next=%d", p.Next())
		case "resynced":
			count := p.Resynced(size(t, f[1]))
			got = fmt.Sprintf("next=%d keep-acks", p.Next())
			if count {
				got = fmt.Sprintf("next=%d count-drawn", p.Next())
			}
		case "gone":
			got = p.Gone(num("end"), num("first")).String()
		default:
			t.Fatalf("line %d: unknown step %q", n+1, f[0])
		}
		if got != want {
			t.Errorf("line %d: %s\n\tgot  %s\n\twant %s", n+1, step, got, want)
		}
	}
}

func size(t *testing.T, s string) uint64 {
	t.Helper()
	mul := uint64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("size %q: %v", s, err)
	}
	return n * mul
}

// The pace rule: a viewer behind by more than its queue is reading, not
// slow, while at its own pace it would read what is behind it within
// CatchUpWithin.
func TestKeepsPace(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name      string
		lag, read uint64
		d         time.Duration
		want      bool
	}{
		{"stopped", 2 * mb, 0, 250 * time.Millisecond, false},
		{"a second tab, nearly as fast as a 60 MB/s flood", 4 * mb, 14 * mb, 250 * time.Millisecond, true},
		{"catching up after a burst", 8 * mb, 4 * mb, 250 * time.Millisecond, true},
		{"a browser drawing a tenth of a flood", 30 * mb, 1 * mb, 250 * time.Millisecond, false},
		{"at the bound", 8 * mb, 1 * mb, 250 * time.Millisecond, true},
		{"just past it", 8*mb + 1, 1 * mb, 250 * time.Millisecond, false},
		{"a trickle far behind", 64 * mb, 64 << 10, time.Second, false},
		{"huge figures do not overflow", 1 << 62, 1 << 62, time.Hour, false},
	} {
		if got := keepsPace(tc.lag, tc.read, tc.d); got != tc.want {
			t.Errorf("%s: keepsPace(%d, %d, %v) = %v, want %v", tc.name, tc.lag, tc.read, tc.d, got, tc.want)
		}
	}
}
