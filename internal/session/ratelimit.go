package session

import (
	"fmt"
	"time"

	"termkeep/internal/wire"
)

// A viewer's frames are metered by two token buckets, one counting frames
// and one counting input bytes. A viewer that sends faster than they refill
// is slowed down, never cut off and never robbed of input: its read loop
// waits for the buckets before it takes the next frame, so the backlog stays
// in its own connection and its own sender blocks, while every other viewer,
// served by goroutines of its own, sees no difference. A person typing, or
// a browser pasting megabytes, stays well inside the bursts.
const (
	// InputFrameRate and InputFrameBurst bound frames of any kind.
	InputFrameRate  = 1000
	InputFrameBurst = 2000
	// InputByteRate and InputByteBurst bound input payload bytes: a paste of
	// 32 MiB goes through at once, and more at 16 MiB a second.
	InputByteRate  = 16 << 20
	InputByteBurst = 32 << 20
	// tooFastNotice is the least time between two notices to one viewer.
	tooFastNotice = 5 * time.Second
	// refusedNotice is the least time between two refusals of one kind of
	// frame (input, resize, signal) told to one read-only viewer.
	refusedNotice = time.Second
)

// bucket is a token bucket. It never sleeps and never reads a clock: the
// caller passes the time in. Not safe for concurrent use.
type bucket struct {
	rate   float64 // tokens added per second
	burst  float64 // the most tokens it holds
	tokens float64 // may go negative: a debt the next refills pay first
	last   time.Time
}

func newBucket(rate, burst float64, now time.Time) *bucket {
	return &bucket{rate: rate, burst: burst, tokens: burst, last: now}
}

// take spends n tokens at now and returns how long the caller must wait
// before acting: 0 while the bucket had them, else the time the refill needs
// to pay the debt. Spending more than the burst at once is allowed (a single
// large frame is not refused); it only waits longer.
func (b *bucket) take(n float64, now time.Time) time.Duration {
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = min(b.burst, b.tokens+el*b.rate)
		b.last = now
	}
	b.tokens -= n
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * float64(time.Second))
}

// inputLimiter meters one viewer's frames. Only its read loop uses it.
type inputLimiter struct {
	frames, bytes *bucket
	noticed       time.Time // when the viewer was last told it is slowed
}

func newInputLimiter(now time.Time) *inputLimiter {
	return &inputLimiter{
		frames: newBucket(InputFrameRate, InputFrameBurst, now),
		bytes:  newBucket(InputByteRate, InputByteBurst, now),
	}
}

// admit accounts for one frame carrying n input bytes at now. It returns
// how long to wait before applying the frame, and a notice for the viewer
// when it is being slowed and has not been told so lately ("" otherwise).
func (l *inputLimiter) admit(n int, now time.Time) (time.Duration, string) {
	wait := max(l.frames.take(1, now), l.bytes.take(float64(n), now))
	if wait <= 0 || now.Sub(l.noticed) < tooFastNotice {
		return wait, ""
	}
	l.noticed = now
	return wait, fmt.Sprintf("input is arriving faster than this server takes it (%d frames or %d MiB a second); it is being slowed down, nothing is lost",
		InputFrameRate, InputByteRate>>20)
}

// throttle applies the viewer's limiter to frame f before the read loop
// acts on it: it tells the viewer when it starts being slowed and waits out
// the limiter. It reports false when the viewer left meanwhile.
func (v *viewer) throttle(lim *inputLimiter, f wire.Frame) bool {
	n := 0
	if f.Type == wire.TypeInput {
		n = len(f.Payload)
	}
	wait, notice := lim.admit(n, time.Now()) // real time: the wait below is a real one
	if wait <= 0 {
		return true
	}
	if notice != "" {
		v.send(func(w *wire.Writer) error { return w.Error(wire.CodeTooFast, notice) })
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-v.gone:
		return false
	}
}

// refusals paces the error frames that tell a read-only viewer its input,
// resize or signal was refused: the first of each kind is told at once,
// and then at most one a second, however fast it sends them (a page
// resized by dragging its window sends dozens). Not safe for concurrent use.
type refusals struct {
	last [3]time.Time // input, resize, signal
}

// notify reports whether a refused frame of type t at now is to be told.
func (r *refusals) notify(t wire.Type, now time.Time) bool {
	var i int
	switch t {
	case wire.TypeInput:
		i = 0
	case wire.TypeResize:
		i = 1
	case wire.TypeSignal:
		i = 2
	default:
		return true
	}
	if !r.last[i].IsZero() && now.Sub(r.last[i]) < refusedNotice {
		return false
	}
	r.last[i] = now
	return true
}
