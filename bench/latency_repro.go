package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/creack/pty"

	"termkeep/internal/api"
)

// Echo the way a user's shell sees it (section echo-repro): each
// contender hosts `bash --norc --noprofile` (PS1 "anchors$ ", TERM
// xterm-256color, LANG C.UTF-8) in a 120×40 terminal, which runs cat; the
// client is the tool's own attach command in a 120×40 pty. One key at a
// time, typed only once the last one shows, 500 timed after 50 that are
// not, with no Enter: the line grows past the terminal's width and wraps.
// This differs from the latency section in the program (a shell's job, not
// cat alone), the size, the warm-up and the Enters.

const (
	reproCols, reproRows = 120, 40
	reproWarm            = 50
	reproKeys            = 500
	reproPrompt          = "anchors$ "
)

var reproShell = []string{"bash", "--norc", "--noprofile"}

func reproEnv() []string {
	return append(viewerEnv(), "PS1="+reproPrompt, "LANG=C.UTF-8")
}

var reproSize = &pty.Winsize{Cols: reproCols, Rows: reproRows}

func reproContenders() []latContender {
	return []latContender{
		{"raw pty", "bash in a pty; the bench types cat and then the keys into the master and reads the echo there", reproRaw},
		{"tmux", "`tmux attach` in a pty to a session of its own running bash (status line off)", reproTmux},
		{"dtach", "`dtach -a` in a pty to a master running bash", reproDtach},
		{"termkeep attach", "`termkeep attach` in a pty to a session running bash", reproAttach},
	}
}

// reproMeasure waits for the shell's prompt, starts cat, and times the keys.
func reproMeasure(ctx context.Context, ptmx *os.File, keys int) (latSample, error) {
	cr := newChunkReader(newPtySource(ptmx))
	esc := &escFilter{}
	var seen []byte
	for deadline := time.Now().Add(10 * time.Second); !bytes.Contains(seen, []byte(reproPrompt)); {
		select {
		case p, ok := <-cr.ch:
			if !ok {
				return latSample{}, fmt.Errorf("the viewer's output ended before the prompt: %v", cr.err)
			}
			seen = append(seen, p...)
		case <-time.After(time.Until(deadline)):
			return latSample{}, fmt.Errorf("no prompt %q within 10 s (got %q)", reproPrompt, seen)
		case <-ctx.Done():
			return latSample{}, ctx.Err()
		}
	}
	if _, err := ptmx.Write([]byte("cat\r")); err != nil {
		return latSample{}, err
	}
	if err := cr.waitQuiet(ctx, esc, 100*time.Millisecond); err != nil {
		return latSample{}, fmt.Errorf("starting cat: %w", err)
	}
	return timeKeys(ctx, cr, esc, func(p []byte) error { _, err := ptmx.Write(p); return err }, reproWarm, keys, 0)
}

func reproRaw(ctx context.Context, e *env, keys int) (latSample, error) {
	cmd := exec.Command(reproShell[0], reproShell[1:]...)
	cmd.Env = reproEnv()
	ptmx, err := pty.StartWithSize(cmd, reproSize)
	if err != nil {
		return latSample{}, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait(); ptmx.Close() }()
	return reproMeasure(ctx, ptmx, keys)
}

// reproClient starts an attach command in a 120×40 pty and waits until it
// has put its terminal in raw mode.
func reproClient(ctx context.Context, name string, cmd *exec.Cmd) (*os.File, func(), error) {
	ptmx, err := pty.StartWithSize(cmd, reproSize)
	if err != nil {
		return nil, nil, fmt.Errorf("start %s in a pty: %w", name, err)
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait(); ptmx.Close() }
	if err := waitRaw(ctx, ptmx); err != nil {
		stop()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return ptmx, stop, nil
}

func reproTmux(ctx context.Context, e *env, keys int) (latSample, error) {
	tmux, stopTmux, err := e.tmuxSession(ctx, reproCols, reproRows,
		"env PS1="+shellQuote(reproPrompt)+" LANG=C.UTF-8 "+strings.Join(reproShell, " "), "set-option", "-g", "status", "off")
	if err != nil {
		return latSample{}, err
	}
	defer stopTmux()
	ptmx, stop, err := reproClient(ctx, "tmux attach", tmux(context.Background(), "attach-session", "-t", "b"))
	if err != nil {
		return latSample{}, err
	}
	defer stop()
	// The prompt was drawn before the client came: ask bash for another.
	ptmx.Write([]byte("\r"))
	return reproMeasure(ctx, ptmx, keys)
}

func reproDtach(ctx context.Context, e *env, keys int) (latSample, error) {
	sock, _, stopMaster, err := dtachSession(e, append([]string{"env", "PS1=" + reproPrompt, "LANG=C.UTF-8"}, reproShell...)...)
	if err != nil {
		return latSample{}, err
	}
	defer stopMaster()
	cmd := exec.Command("dtach", "-a", sock, "-E", "-z", "-r", "none")
	cmd.Env = viewerEnv()
	ptmx, stop, err := reproClient(ctx, "dtach -a", cmd)
	if err != nil {
		return latSample{}, err
	}
	defer stop()
	ptmx.Write([]byte("\r"))
	return reproMeasure(ctx, ptmx, keys)
}

func reproAttach(ctx context.Context, e *env, keys int) (latSample, error) {
	srv, err := startServer(ctx, e.bin)
	if err != nil {
		return latSample{}, err
	}
	defer srv.close()
	cwd, _ := os.Getwd()
	if _, err := srv.c.Create(ctx, api.CreateRequest{
		Name: "b", Command: reproShell, Cwd: cwd, Cols: reproCols, Rows: reproRows,
		Env: os.Environ(), SetEnv: []string{"TERM=xterm-256color", "PS1=" + reproPrompt, "LANG=C.UTF-8"},
		NoShellIntegration: true,
	}); err != nil {
		return latSample{}, fmt.Errorf("create session: %w", err)
	}
	cmd := exec.Command(srv.termkeep(), "--state-dir", string(srv.dir), "--no-autostart", "attach", "b")
	cmd.Env = viewerEnv()
	ptmx, stop, err := reproClient(ctx, "termkeep attach", cmd)
	if err != nil {
		return latSample{}, err
	}
	defer stop()
	ptmx.Write([]byte("\r"))
	return reproMeasure(ctx, ptmx, keys)
}

// runRepro runs the echo-repro contenders for the given rounds, interleaved.
func runRepro(ctx context.Context, e *env, cfg config) []*latResult {
	var results []*latResult
	for _, c := range reproContenders() {
		results = append(results, &latResult{c: c})
	}
	keys := reproKeys
	if cfg.quick {
		keys = cfg.keys
	}
	return runLatRounds(ctx, e, cfg, "echo-repro", results, keys, keys+reproWarm)
}
