package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"termkeep/internal/client"
	"termkeep/internal/screen"
	"termkeep/internal/wire"
)

// Reattach: a session has printed a long history (1 GiB in the full run)
// and sits idle; a fresh viewer connects. The figure is the time from the
// connect (or the start of the attach process) until the viewer has the
// session's final screen: the end marker, the file's last line, and the
// first line of the final screen have both reached it. The same is measured
// at a small history, to show the time does not grow with the history.
// After each timed attach the bench reads on until the viewer goes quiet and
// checks the whole screen with the screen model: what the viewer received,
// drawn on an empty terminal, must show exactly the file's last lines.

// reattachGoal is the project's goal for a fresh viewer's correct screen.
const reattachGoal = 50 * time.Millisecond

// reattachQuiet is how long a viewer must stay silent after the end marker
// before what it received is taken as the whole redraw.
const reattachQuiet = 50 * time.Millisecond

// reattachSmallMiB is the small history the big one is compared with.
const reattachSmallMiB = 1

// reattachHistory is one session's history, the same in termkeep and tmux.
type reattachHistory struct {
	mib    int
	size   int64
	file   string
	name   string // the session's name, in both termkeep and tmux
	id     string // termkeep's session id
	top    []byte // what the first line of the final screen starts with
	expect string // the final screen as text (screen.Text)
}

// reattachRig is the servers the viewers attach to: one termkeep server
// and one tmux server, each with one session per history.
type reattachRig struct {
	e    *env
	srv  *tkServer
	ws   wsTarget
	tmux func(ctx context.Context, args ...string) *exec.Cmd
}

type reattachContender struct {
	name string
	note string
	// attach connects a fresh viewer to the history's session and returns
	// a source of what it draws, and how to end it.
	attach func(ctx context.Context, rig *reattachRig, h *reattachHistory) (source, func(), error)
}

func reattachContenders() []reattachContender {
	return []reattachContender{
		{"termkeep wire client", "internal/client, Hello{From: FromSnapshot, Cols: 200, Rows: 50}: the screen only, no scrollback", reattachWire},
		{"termkeep wire client, 10,000 lines", "the same with Scrollback: 10000, what the web UI asks for: the snapshot's cost without the WebSocket's", reattachWireHistory},
		{"termkeep WebSocket", "a WebSocket viewer, `?scrollback=0&cols=200&rows=50`: the screen only, as the wire client", reattachWSScreen},
		{"termkeep WebSocket, web UI", "a WebSocket viewer as the web UI opens one: `?scrollback=10000&cols=200&rows=50` (a snapshot with 10,000 lines of history above the screen)", reattachWS},
		{"termkeep attach", "`termkeep attach` started in a pty (its default --scrollback 1000: the screen first, then a second snapshot with 1,000 lines of history above it), timed from the process's start", reattachCLI},
		{"tmux attach", "`tmux attach-session` started in a pty (status line off), timed from the process's start", reattachTmux},
	}
}

// reattachResult is one contender at one history.
type reattachResult struct {
	c       reattachContender
	h       *reattachHistory
	samples []time.Duration
	errs    []string
	skipped string
}

// reattachReport is the whole section.
type reattachReport struct {
	results []*reattachResult
	produce time.Duration // how long printing the histories took
	err     error         // set when the section could not run at all
}

func runReattach(ctx context.Context, e *env, cfg config) *reattachReport {
	rep := &reattachReport{}
	rig := &reattachRig{e: e}
	var hists []*reattachHistory
	for _, mib := range []int{reattachSmallMiB, cfg.reattachMiB} {
		path, size, err := e.workload(mib)
		if err != nil {
			rep.err = err
			return rep
		}
		h := &reattachHistory{mib: mib, size: size, file: path, name: fmt.Sprintf("hist%d", mib)}
		if h.top, h.expect, err = finalScreen(path, e.m); err != nil {
			rep.err = err
			return rep
		}
		hists = append(hists, h)
	}

	srv, err := startServer(ctx, e.bin)
	if err != nil {
		rep.err = err
		return rep
	}
	defer srv.close()
	rig.srv = srv
	if rig.ws, err = srv.wsTarget(ctx); err != nil {
		rep.err = err
		return rep
	}
	tmuxOK := false
	if _, err := exec.LookPath("tmux"); err == nil {
		tmuxOK = true
		var sock string
		rig.tmux, sock = e.newTmux()
		defer func() {
			c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			rig.tmux(c, "kill-server").Run()
			os.Remove(sock)
		}()
	}

	// Print every history in both at once: the printing is not timed, and
	// the two share the machine's cores.
	started := time.Now()
	for _, h := range hists {
		argv := []string{"sh", "-c", "cat " + shellQuote(h.file) + "; exec sleep 3600"}
		sess, _, err := srv.create(ctx, h.name, argv)
		if err != nil {
			rep.err = err
			return rep
		}
		h.id = sess.ID
		if tmuxOK {
			args := []string{"new-session", "-d", "-s", h.name, "-x", strconv.Itoa(termCols), "-y", strconv.Itoa(termRows), argv[2]}
			if h == hists[0] {
				args = append(args, ";", "set-option", "-g", "status", "off")
			}
			if out, err := rig.tmux(ctx, args...).CombinedOutput(); err != nil {
				rep.err = fmt.Errorf("tmux new-session: %v: %s", err, out)
				return rep
			}
		}
	}
	logf("reattach: printing %s into termkeep and tmux sessions", histNames(hists))
	for _, h := range hists {
		if err := waitPrinted(ctx, rig, h, tmuxOK); err != nil {
			rep.err = err
			return rep
		}
	}
	rep.produce = time.Since(started)
	logf("reattach: histories printed in %v", rep.produce.Round(100*time.Millisecond))

	for _, h := range hists {
		for _, c := range reattachContenders() {
			r := &reattachResult{c: c, h: h}
			if c.name == "tmux attach" && !tmuxOK {
				r.skipped = "tmux is not installed"
			}
			rep.results = append(rep.results, r)
		}
	}
	for round := 1; round <= cfg.reattachTries; round++ {
		for _, r := range rep.results {
			if r.skipped != "" {
				continue
			}
			rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			d, err := reattachOnce(rctx, rig, r.c, r.h)
			cancel()
			if ctx.Err() != nil {
				rep.err = ctx.Err()
				return rep
			}
			if err != nil {
				r.errs = append(r.errs, err.Error())
				logf("reattach %d/%d %-22s %5d MiB FAILED: %v", round, cfg.reattachTries, r.c.name, r.h.mib, err)
				continue
			}
			r.samples = append(r.samples, d)
		}
	}
	for _, r := range rep.results {
		if len(r.samples) > 0 {
			logf("reattach %-22s %5d MiB history: median %v over %d", r.c.name, r.h.mib,
				time.Duration(medianOf(r.samples, func(d time.Duration) float64 { return float64(d) })).Round(10*time.Microsecond), len(r.samples))
		}
	}
	return rep
}

func histNames(hs []*reattachHistory) string {
	var s []string
	for _, h := range hs {
		s = append(s, fmt.Sprintf("%d MiB", h.mib))
	}
	return strings.Join(s, " and ")
}

// waitPrinted waits until the history's whole file is on the session's
// screen in termkeep (and tmux): the end marker is drawn.
func waitPrinted(ctx context.Context, rig *reattachRig, h *reattachHistory, tmux bool) error {
	deadline := time.Now().Add(5*time.Minute + time.Duration(h.size/2e6)*time.Second)
	tkDone, tmDone := false, !tmux
	for !tkDone || !tmDone {
		if !tkDone {
			text, err := rig.srv.c.Screen(ctx, h.id, false, 0)
			tkDone = err == nil && strings.Contains(text, string(rig.e.m.end))
		}
		if !tmDone {
			out, err := rig.tmux(ctx, "capture-pane", "-p", "-t", h.name).Output()
			tmDone = err == nil && bytes.Contains(out, rig.e.m.end)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the %d MiB history was not printed in time (termkeep done %v, tmux done %v)", h.mib, tkDone, tmDone)
		}
		time.Sleep(250 * time.Millisecond)
	}
	// Let the checkpoint and the log's fsync that follow the burst pass.
	time.Sleep(time.Second)
	return nil
}

// finalScreen reads the end of the workload file and returns what the first
// line of a 200×50 terminal's final screen begins with (the line's "[N]"),
// and that screen as text: the file's last rows-1 lines, then the empty line
// the cursor sits on.
func finalScreen(path string, m markers) ([]byte, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	n := min(st.Size(), 64<<10)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, st.Size()-n); err != nil {
		return nil, "", err
	}
	lines := strings.Split(strings.TrimSuffix(string(buf), "\n"), "\n")
	if len(lines) < termRows+1 {
		return nil, "", fmt.Errorf("%s has fewer than %d lines", path, termRows+1)
	}
	lines = lines[1:] // the first may be cut
	tail := lines[len(lines)-(termRows-1):]
	top, _, _ := strings.Cut(tail[0], " ")
	if top == "" || !strings.HasPrefix(top, "[") {
		return nil, "", fmt.Errorf("%s: the final screen's first line %q has no line number", path, tail[0])
	}
	scr := screen.New(termCols, termRows, screen.Options{})
	scr.Write([]byte(strings.Join(lines, "\r\n") + "\r\n"))
	return []byte(top), scr.Text(0), nil
}

// reattachOnce attaches one fresh viewer and times it until the final
// screen is drawn, then checks that screen in full.
func reattachOnce(ctx context.Context, rig *reattachRig, c reattachContender, h *reattachHistory) (time.Duration, error) {
	t0 := time.Now()
	src, stop, err := c.attach(ctx, rig, h)
	if err != nil {
		return 0, err
	}
	cr := newChunkReader(src)
	defer func() {
		stop()
		go func() {
			for range cr.ch { // let the reader see the end and return
			}
		}()
	}()
	// The final screen is drawn once its first line and, after it, the
	// end marker have arrived; each is searched for only in the bytes it
	// can newly end in.
	var got []byte
	topEnd := -1
	for {
		select {
		case p, ok := <-cr.ch:
			if !ok {
				return 0, fmt.Errorf("the viewer's output ended before the final screen: %v", cr.err)
			}
			from := len(got)
			got = append(got, p...)
			if topEnd < 0 {
				i := bytes.Index(got[max(from-len(h.top)+1, 0):], h.top)
				if i < 0 {
					continue
				}
				topEnd = max(from-len(h.top)+1, 0) + i + len(h.top)
				from = topEnd
			}
			if !bytes.Contains(got[max(from-len(rig.e.m.end)+1, topEnd):], rig.e.m.end) {
				continue
			}
		case <-ctx.Done():
			return 0, fmt.Errorf("no final screen after %v (%d bytes received)", time.Since(t0).Round(time.Millisecond), len(got))
		}
		break
	}
	d := time.Since(t0)
	// The rest of the redraw (the cursor's place, modes) follows at once.
	quiet := time.NewTimer(reattachQuiet)
	defer quiet.Stop()
	for done := false; !done; {
		select {
		case p, ok := <-cr.ch:
			if !ok {
				done = true
				break
			}
			got = append(got, p...)
			quiet.Reset(reattachQuiet)
		case <-quiet.C:
			done = true
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	scr := screen.New(termCols, termRows, screen.Options{})
	scr.Write(got)
	if text := scr.Text(0); text != h.expect {
		return 0, fmt.Errorf("wrong screen after %v: %s", d.Round(time.Microsecond), firstDiff(h.expect, text))
	}
	return d, nil
}

// firstDiff describes the first line where two screens' texts differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("row %d is %q, want %q", i, clip(b, 60), clip(a, 60))
		}
	}
	return "identical"
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func reattachWire(ctx context.Context, rig *reattachRig, h *reattachHistory) (source, func(), error) {
	return reattachWireWith(ctx, rig, h, 0)
}

func reattachWireHistory(ctx context.Context, rig *reattachRig, h *reattachHistory) (source, func(), error) {
	return reattachWireWith(ctx, rig, h, 10000)
}

func reattachWireWith(ctx context.Context, rig *reattachRig, h *reattachHistory, scrollback int) (source, func(), error) {
	st, err := client.New(rig.srv.dir).Attach(ctx, h.id, wire.Hello{Role: wire.RoleViewer, From: wire.FromSnapshot, Cols: termCols, Rows: termRows, Scrollback: scrollback})
	if err != nil {
		return nil, nil, fmt.Errorf("attach with the wire client: %w", err)
	}
	return &wireSource{st: st}, func() { st.Close() }, nil
}

func reattachWS(ctx context.Context, rig *reattachRig, h *reattachHistory) (source, func(), error) {
	return reattachWSWith(ctx, rig, h, 10000)
}

func reattachWSScreen(ctx context.Context, rig *reattachRig, h *reattachHistory) (source, func(), error) {
	return reattachWSWith(ctx, rig, h, 0)
}

func reattachWSWith(ctx context.Context, rig *reattachRig, h *reattachHistory, scrollback int) (source, func(), error) {
	v, err := dialWS(ctx, rig.ws, h.id, fmt.Sprintf("scrollback=%d&cols=%d&rows=%d", scrollback, termCols, termRows), false)
	if err != nil {
		return nil, nil, err
	}
	return sourceFunc(v.chunk), v.close, nil
}

func reattachCLI(ctx context.Context, rig *reattachRig, h *reattachHistory) (source, func(), error) {
	cmd := exec.Command(rig.srv.termkeep(), "--state-dir", string(rig.srv.dir), "--no-autostart", "attach", h.name)
	cmd.Env = viewerEnv()
	ptmx, stop, err := startInPty(cmd)
	if err != nil {
		return nil, nil, err
	}
	return newPtySource(ptmx), stop, nil
}

func reattachTmux(ctx context.Context, rig *reattachRig, h *reattachHistory) (source, func(), error) {
	if rig.tmux == nil {
		return nil, nil, errors.New("tmux is not installed")
	}
	cmd := rig.tmux(context.Background(), "attach-session", "-t", h.name)
	ptmx, stop, err := startInPty(cmd)
	if err != nil {
		return nil, nil, err
	}
	return newPtySource(ptmx), stop, nil
}
