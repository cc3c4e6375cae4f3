package main

import (
	"strings"
	"testing"
	"time"
)

// The fan-out verdict: 8 attached clients against 1 no slower than tmux's
// ratio, and every byte delivered; a verdict that fails on delivery says
// so in its figure, not only the ratios that would have met it.
func TestFanAttachGoal(t *testing.T) {
	const size = 1000
	run := func(wall time.Duration, least int64, resyncs int) attachFanSample {
		return attachFanSample{wall: wall, minBytes: least, resyncs: resyncs}
	}
	res := func(name string, errs int, s ...attachFanSample) *attachFanResult {
		r := &attachFanResult{c: attachFanCase{name: name}, size: size, samples: s}
		for range errs {
			r.errs = append(r.errs, "failed")
		}
		return r
	}
	tmux := []*attachFanResult{res("tmux1", 0, run(time.Second, 10, 0)), res("tmux8", 0, run(2*time.Second, 5, 0))}
	for _, c := range []struct {
		name    string
		results []*attachFanResult
		met     *bool
		figure  []string // what the figure must say
	}{
		{"met", append([]*attachFanResult{res("attach1", 0, run(time.Second, 2*size, 0)), res("attach8", 0, run(1500*time.Millisecond, 2*size, 0))}, tmux...),
			decided(true), []string{"1.50× vs tmux 2.00×", "every byte"}},
		{"the ratio met, bytes lost to resyncs", append([]*attachFanResult{res("attach1", 0, run(time.Second, 2*size, 0)), res("attach8", 0, run(1360*time.Millisecond, 224, 106))}, tmux...),
			decided(false), []string{"1.36× vs tmux 2.00×", "106 resyncs", "0.22×"}},
		{"a client drew less than the file without a resync", append([]*attachFanResult{res("attach1", 0, run(time.Second, 2*size, 0)), res("attach8", 0, run(time.Second, size-1, 0))}, tmux...),
			decided(false), []string{"1.00×"}},
		{"slower than tmux's ratio", append([]*attachFanResult{res("attach1", 0, run(time.Second, 2*size, 0)), res("attach8", 0, run(3*time.Second, 2*size, 0))}, tmux...),
			decided(false), []string{"3.00× vs tmux 2.00×"}},
		{"a run failed", append([]*attachFanResult{res("attach1", 0, run(time.Second, 2*size, 0)), res("attach8", 1, run(time.Second, 2*size, 0))}, tmux...),
			decided(false), []string{"1 of 2 runs failed"}},
		{"tmux not measured", []*attachFanResult{res("attach1", 0, run(time.Second, 2*size, 0)), res("attach8", 0, run(time.Second, 2*size, 0))},
			nil, nil},
		{"no attach run succeeded", append([]*attachFanResult{res("attach1", 0, run(time.Second, 2*size, 0)), res("attach8", 3)}, tmux...),
			nil, nil},
	} {
		g := (&report{attachFan: c.results}).fanAttachGoal()
		switch {
		case (g.met == nil) != (c.met == nil):
			t.Errorf("%s: decided %v, want %v (%s)", c.name, g.met != nil, c.met != nil, g.figure)
		case g.met != nil && *g.met != *c.met:
			t.Errorf("%s: met %v, want %v (%s)", c.name, *g.met, *c.met, g.figure)
		}
		for _, want := range c.figure {
			if !strings.Contains(g.figure, want) {
				t.Errorf("%s: the figure %q does not say %q", c.name, g.figure, want)
			}
		}
	}
}
