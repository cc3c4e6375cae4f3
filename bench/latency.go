package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/wire"
)

// Keystroke echo latency: cat runs in a cooked terminal, so the session's
// pty echoes every key; the bench types one key, waits until the viewer
// shows it, and types the next. Every echoEnterEvery keys an Enter (not
// timed) makes cat write the line back and keeps the line short.

const (
	echoEnterEvery = 50
	echoQuiet      = 30 * time.Millisecond // output silent this long: the Enter's echo and cat's line are through
	echoTimeout    = 5 * time.Second       // one key's echo
)

type latContender struct {
	name string
	note string
	run  func(ctx context.Context, e *env, keys int) (latSample, error)
}

func latContenders() []latContender {
	return []latContender{
		{"raw pty", "cat in a pty; the bench writes the key to the master and reads the echo there", latRaw},
		{"tmux", "tmux attach in a pty, the pane running cat; the bench types into the attach pty and reads what tmux draws there", latTmux},
		{"dtach", "`dtach -a` in a pty, its master running cat: the minimal relay (no log, no screen); the bench types into the attach pty", latDtach},
		{"termkeep attach", "termkeep attach in a pty; the bench types into the attach pty and reads its output there", latAttach},
		{"termkeep WebSocket viewer", "an Input frame over a WebSocket; the echo is the first Output frame containing the key", latWS},
		{"termkeep wire client", "the same over the unix socket (internal/client), for comparison with the WebSocket", latWire},
		{"termkeep holder socket", "no server: the bench speaks to the session's holder as the server would (the server was killed after creating the session), to show the holder's share of the path", latHolder},
		{"termkeep holder lane", "as the holder socket, but the bench hands the holder a terminal (a pty) as an output lane and reads the echo from that pty: the holder's half of the lane (docs/architecture.md, Lanes)", latHolderLane},
	}
}

// latSample is one round of one contender: the distribution of its keys.
type latSample struct {
	p50, p99, p999, max time.Duration
	keys                int
}

type latResult struct {
	c       latContender
	samples []latSample
	errs    []string
	skipped string
}

// chunkReader turns a source into a channel of chunks (copies), so the
// bench can wait for output with a timeout; the same goroutine hand-off is
// in every contender's figures.
type chunkReader struct {
	ch  chan []byte
	err error // set before ch is closed
}

func newChunkReader(src source) *chunkReader {
	cr := &chunkReader{ch: make(chan []byte, 256)}
	go func() {
		defer close(cr.ch)
		for {
			p, err := src.next()
			if err != nil {
				cr.err = err
				return
			}
			cr.ch <- append([]byte(nil), p...)
		}
	}()
	return cr
}

// waitKey waits for the printable byte k in the output, skipping escape
// sequences (a renderer such as tmux moves the cursor around the echo).
func (cr *chunkReader) waitKey(ctx context.Context, esc *escFilter, k byte, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case p, ok := <-cr.ch:
			if !ok {
				return fmt.Errorf("the viewer's output ended: %v", cr.err)
			}
			if esc.contains(p, k) {
				return nil
			}
		case <-t.C:
			return fmt.Errorf("no echo of %q within %v", k, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitQuiet reads until the output has been silent for quiet.
func (cr *chunkReader) waitQuiet(ctx context.Context, esc *escFilter, quiet time.Duration) error {
	deadline := time.Now().Add(echoTimeout)
	t := time.NewTimer(quiet)
	defer t.Stop()
	for {
		select {
		case p, ok := <-cr.ch:
			if !ok {
				return fmt.Errorf("the viewer's output ended: %v", cr.err)
			}
			esc.contains(p, 0) // keep the escape state in step
			if time.Now().After(deadline) {
				return errors.New("the output never went quiet")
			}
			t.Reset(quiet)
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// measureEcho warms the path up (a key and an Enter, not timed), then
// times keys one at a time.
func measureEcho(ctx context.Context, src source, send func([]byte) error, keys int) (latSample, error) {
	cr := newChunkReader(src)
	esc := &escFilter{}
	// The viewer may still be attaching: repeat the first key until it
	// comes back.
	var err error
	for try := 0; try < 10; try++ {
		if err = send([]byte("z")); err != nil {
			return latSample{}, fmt.Errorf("warm-up key: %w", err)
		}
		if err = cr.waitKey(ctx, esc, 'z', time.Second); err == nil {
			break
		}
		if ctx.Err() != nil {
			return latSample{}, ctx.Err()
		}
	}
	if err != nil {
		return latSample{}, fmt.Errorf("warm-up: %w", err)
	}
	if err := send([]byte("\r")); err != nil {
		return latSample{}, fmt.Errorf("warm-up: %w", err)
	}
	if err := cr.waitQuiet(ctx, esc, echoQuiet); err != nil {
		return latSample{}, fmt.Errorf("warm-up: %w", err)
	}
	return timeKeys(ctx, cr, esc, send, 0, keys, echoEnterEvery)
}

// timeKeys types warm keys, then times keys more, one at a time, each once
// the last one shows; every enterEvery timed keys (0: never) an Enter, not
// timed, and a wait until the output is quiet.
func timeKeys(ctx context.Context, cr *chunkReader, esc *escFilter, send func([]byte) error, warm, keys, enterEvery int) (latSample, error) {
	lat := make([]time.Duration, 0, keys)
	for i := 0; i < warm+keys; i++ {
		j := i - warm // the timed key's index
		if enterEvery > 0 && j > 0 && j%enterEvery == 0 {
			if err := send([]byte("\r")); err != nil {
				return latSample{}, fmt.Errorf("enter after key %d: %w", j, err)
			}
			if err := cr.waitQuiet(ctx, esc, echoQuiet); err != nil {
				return latSample{}, fmt.Errorf("enter after key %d: %w", j, err)
			}
		}
		k := byte('a' + i%26)
		t0 := time.Now()
		if err := send([]byte{k}); err != nil {
			return latSample{}, fmt.Errorf("key %d: %w", i+1, err)
		}
		if err := cr.waitKey(ctx, esc, k, echoTimeout); err != nil {
			return latSample{}, fmt.Errorf("key %d: %w", i+1, err)
		}
		if j >= 0 {
			lat = append(lat, time.Since(t0))
		}
	}
	slices.Sort(lat)
	rank := func(p float64) time.Duration { // nearest rank
		i := int(p*float64(len(lat))+0.999999) - 1
		return lat[min(max(i, 0), len(lat)-1)]
	}
	return latSample{p50: rank(0.50), p99: rank(0.99), p999: rank(0.999), max: lat[len(lat)-1], keys: len(lat)}, nil
}

// escFilter finds printable bytes outside escape sequences, across chunks.
type escFilter struct {
	state int // 0 ground, 1 after ESC, 2 in CSI, 3 in a string (OSC, DCS, …), 4 ESC inside a string, 5 ESC intermediates
}

// contains feeds p and reports whether the printable byte k occurs in it
// outside escape sequences (k = 0 only feeds).
func (f *escFilter) contains(p []byte, k byte) bool {
	found := false
	for _, c := range p {
		switch f.state {
		case 0:
			if c == 0x1b {
				f.state = 1
			} else if k != 0 && c == k {
				found = true
			}
		case 1:
			switch {
			case c == '[':
				f.state = 2
			case c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X':
				f.state = 3
			case c >= 0x20 && c <= 0x2f:
				f.state = 5
			default:
				f.state = 0
			}
		case 2:
			if c >= 0x40 && c <= 0x7e {
				f.state = 0
			}
		case 3:
			if c == 0x07 {
				f.state = 0
			} else if c == 0x1b {
				f.state = 4
			}
		case 4:
			if c == '\\' {
				f.state = 0
			} else {
				f.state = 3
			}
		case 5:
			if c >= 0x30 && c <= 0x7e {
				f.state = 0
			}
		}
	}
	return found
}

// waitRaw waits until the program in the pty has put its terminal in raw
// mode (echo off): before that, the outer pty would echo the key itself.
func waitRaw(ctx context.Context, f *os.File) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		on, err := ptyEcho(f)
		if err != nil {
			return err
		}
		if !on {
			return nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return errors.New("the viewer never put its terminal in raw mode")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func latRaw(ctx context.Context, e *env, keys int) (latSample, error) {
	cmd := exec.Command("cat")
	ptmx, stop, err := startInPty(cmd)
	if err != nil {
		return latSample{}, err
	}
	defer stop()
	return measureEcho(ctx, newPtySource(ptmx), func(p []byte) error { _, err := ptmx.Write(p); return err }, keys)
}

func latTmux(ctx context.Context, e *env, keys int) (latSample, error) {
	// No status line: its clock would redraw at times of its own.
	tmux, stopTmux, err := e.tmuxSession(ctx, termCols, termRows, "cat", "set-option", "-g", "status", "off")
	if err != nil {
		return latSample{}, err
	}
	defer stopTmux()
	attach := tmux(context.Background(), "attach-session", "-t", "b")
	ptmx, stop, err := startInPty(attach)
	if err != nil {
		return latSample{}, err
	}
	defer stop()
	if err := waitRaw(ctx, ptmx); err != nil {
		return latSample{}, fmt.Errorf("tmux attach: %w", err)
	}
	return measureEcho(ctx, newPtySource(ptmx), func(p []byte) error { _, err := ptmx.Write(p); return err }, keys)
}

func latAttach(ctx context.Context, e *env, keys int) (latSample, error) {
	srv, err := startServer(ctx, e.bin)
	if err != nil {
		return latSample{}, err
	}
	defer srv.close()
	if _, _, err := srv.create(ctx, "b", []string{"cat"}); err != nil {
		return latSample{}, err
	}
	cmd := exec.Command(srv.termkeep(), append(attachArgv(srv), "b")...)
	cmd.Env = viewerEnv()
	ptmx, stop, err := startInPty(cmd)
	if err != nil {
		return latSample{}, err
	}
	defer stop()
	if err := waitRaw(ctx, ptmx); err != nil {
		return latSample{}, fmt.Errorf("termkeep attach: %w", err)
	}
	return measureEcho(ctx, newPtySource(ptmx), func(p []byte) error { _, err := ptmx.Write(p); return err }, keys)
}

// catSession starts a server with one session, "b", running cat.
func catSession(ctx context.Context, e *env) (*tkServer, api.Session, error) {
	srv, err := startServer(ctx, e.bin)
	if err != nil {
		return nil, api.Session{}, err
	}
	sess, _, err := srv.create(ctx, "b", []string{"cat"})
	if err != nil {
		srv.close()
		return nil, api.Session{}, err
	}
	return srv, sess, nil
}

func latWS(ctx context.Context, e *env, keys int) (latSample, error) {
	srv, sess, err := catSession(ctx, e)
	if err != nil {
		return latSample{}, err
	}
	defer srv.close()
	t, err := srv.wsTarget(ctx)
	if err != nil {
		return latSample{}, err
	}
	v, err := dialWS(ctx, t, sess.ID, "from=-1", false)
	if err != nil {
		return latSample{}, err
	}
	defer v.close()
	return measureEcho(ctx, sourceFunc(v.chunk), v.input, keys)
}

func latWire(ctx context.Context, e *env, keys int) (latSample, error) {
	srv, _, err := catSession(ctx, e)
	if err != nil {
		return latSample{}, err
	}
	defer srv.close()
	st, err := client.New(srv.dir).Attach(ctx, "b", wire.Hello{Role: wire.RoleViewer, From: wire.FromEnd})
	if err != nil {
		return latSample{}, fmt.Errorf("attach with the wire client: %w", err)
	}
	defer st.Close()
	src := &wireSource{st: st}
	return measureEcho(ctx, src, st.Input, keys)
}

func latHolder(ctx context.Context, e *env, keys int) (latSample, error) {
	srv, c, w, r, err := holderAsServer(ctx, e)
	if err != nil {
		return latSample{}, err
	}
	defer srv.close()
	defer c.Close()
	var buf []byte
	src := sourceFunc(func() ([]byte, error) {
		for {
			f, err := wire.ReadFrame(r, &buf)
			if err != nil {
				return nil, err
			}
			switch f.Type {
			case wire.TypeOutput:
				_, data, err := wire.ParseOutput(f.Payload)
				return data, err
			case wire.TypeError:
				_, msg, _ := wire.ParseError(f.Payload)
				return nil, fmt.Errorf("the holder: %s", msg)
			}
		}
	})
	return measureEcho(ctx, src, w.Input, keys)
}

// sourceFunc adapts a function to a source.
type sourceFunc func() ([]byte, error)

func (f sourceFunc) next() ([]byte, error) { return f() }

// runLatencies runs every latency contender for the given rounds,
// interleaved.
func runLatencies(ctx context.Context, e *env, cfg config) []*latResult {
	var results []*latResult
	for _, c := range latContenders() {
		if cfg.only != "" && !matchesAny(c.name, strings.Split(cfg.only, ",")) && !matchesAny("latency", strings.Split(cfg.only, ",")) {
			continue
		}
		results = append(results, &latResult{c: c})
	}
	return runLatRounds(ctx, e, cfg, "latency", results, cfg.keys, cfg.keys)
}

// runLatRounds runs results' contenders for cfg.rounds rounds, interleaved,
// each timing keys keys; typed is every key a run types, timed or not, for
// its time limit. label names the section in the log.
func runLatRounds(ctx context.Context, e *env, cfg config, label string, results []*latResult, keys, typed int) []*latResult {
	for round := 1; round <= cfg.rounds; round++ {
		for _, r := range results {
			if r.skipped != "" {
				continue
			}
			rctx, cancel := context.WithTimeout(ctx, 60*time.Second+time.Duration(typed)*20*time.Millisecond)
			s, err := r.c.run(rctx, e, keys)
			cancel()
			if ctx.Err() != nil {
				return results
			}
			switch {
			case errors.Is(err, errSkipped):
				r.skipped = strings.TrimPrefix(err.Error(), errSkipped.Error()+": ")
				logf("%s %-26s skipped: %s", label, r.c.name, r.skipped)
			case err != nil:
				r.errs = append(r.errs, err.Error())
				logf("round %d/%d %s %-26s FAILED: %v", round, cfg.rounds, label, r.c.name, err)
			default:
				r.samples = append(r.samples, s)
				logf("round %d/%d %s %-26s p50 %v  p99 %v  p99.9 %v  max %v", round, cfg.rounds, label, r.c.name,
					s.p50.Round(time.Microsecond), s.p99.Round(time.Microsecond), s.p999.Round(time.Microsecond), s.max.Round(time.Microsecond))
			}
		}
	}
	return results
}
