package liveness

import (
	"testing"
	"time"
)

// FuzzPinger drives a Pinger with any configuration and any sequence of
// wakes (each byte pair: how far the clock moved, in milliseconds, and
// whether a frame was heard) and checks what must always hold: a viewer
// heard within the interval plus the timeout is never dropped, nor one
// whose silence began at or after the last stall; a stall is never judged.
func FuzzPinger(f *testing.F) {
	f.Add(int64(30000), int64(10000), []byte{5, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5, 1})
	f.Add(int64(300), int64(300), []byte{150, 0, 150, 0, 255, 0, 150, 1, 0, 0})
	f.Add(int64(0), int64(-5), []byte{1, 1, 2, 0, 3, 0})
	f.Fuzz(func(t *testing.T, intervalMs, timeoutMs int64, steps []byte) {
		cfg := Config{Interval: time.Duration(intervalMs%100000) * time.Millisecond, Timeout: time.Duration(timeoutMs%100000) * time.Millisecond}
		now := time.Unix(1e9, 0)
		p := New(cfg, now)
		limit := max(cfg.Interval, minDuration) + max(cfg.Timeout, minDuration)
		heard, restart := time.Time{}, now
		for i := 0; i+1 < len(steps); i += 2 {
			now = now.Add(time.Duration(steps[i]) * p.Step() / 16)
			if steps[i+1]&1 == 1 {
				heard = now
			}
			due := p.due
			v := p.Wake(now, heard)
			if now.Sub(due) > p.LateBy() {
				if v.Action != Ping || !v.Restarted {
					t.Fatalf("wake %s late: %+v, want a restart", now.Sub(due), v)
				}
				restart = now
				continue
			}
			if v.Restarted {
				t.Fatalf("restart on a wake %s late (late-by %s)", now.Sub(due), p.LateBy())
			}
			if v.Action == Drop && (now.Sub(heard) <= limit || now.Sub(restart) <= limit) {
				t.Fatalf("dropped at %s: heard %s ago, restarted %s ago, limit %s", now, now.Sub(heard), now.Sub(restart), limit)
			}
			if v.Action == Drop {
				return
			}
		}
	})
}
