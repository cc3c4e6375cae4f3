package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/screen"
	"termkeep/internal/slowlink"
	"termkeep/internal/testsshd"
)

// Predictive echo over ssh (section ssh-echo): a private sshd on
// 127.0.0.1 (internal/testsshd) behind a proxy that holds every chunk
// sshEchoDelay each way (internal/slowlink), and `termkeep attach
// 127.0.0.1:SESSION` (--predict auto, its default) in a 120×40 pty that
// the bench reads into a screen model of its own: the local terminal. A
// typist types into bash, zsh and python3 as the page's predictive echo
// bench does (web/bench/predict.mjs: the same lines, pace and pauses).
// Each printable key is timed from its write to the pty until the local
// screen shows its character at its cell, predicted or echoed; at the
// end, the cells where the local screen differs from the session's own
// (the server's screen model), or still shows a prediction's underline,
// are the mispredictions left on the screen.

const (
	sshEchoDelay     = 150 * time.Millisecond // each way
	fullSSHEchoKeys  = 300
	quickSSHEchoKeys = 60

	sshEchoP50Max = 10 * time.Millisecond // perceived p50 in bash

	// A typist's pace, as the page's bench: a key every 140 ms give or
	// take 20 (a fixed pace would meet the output at the same phase key
	// after key), a pause before each line.
	sshEchoKeyEvery  = 140 * time.Millisecond
	sshEchoJitter    = 20 * time.Millisecond
	sshEchoLinePause = 600 * time.Millisecond
	// sshEchoWait bounds one wait: a prompt, a line's characters.
	sshEchoWait = 30 * time.Second
)

// sshEchoProgram is one program typed into.
type sshEchoProgram struct {
	name    string
	command []string
	setup   string // typed into the session before attach comes
	prompt  *regexp.Regexp
	lines   []string // '\b' is a backspace: a typo fixed
}

var sshEchoPrograms = []sshEchoProgram{
	{"bash", []string{"/bin/bash"}, "PS1='$ '; clear", regexp.MustCompile(`^\$$`),
		[]string{"echo the quick brown fox", "ls -d /tmp", "echo helo\b\blo world", `printf "%s\n" done`, "cd /tmp && pwd", "true # jumps over the lazy dog"}},
	{"zsh", []string{"/usr/bin/zsh"}, "PROMPT='$ '; clear", regexp.MustCompile(`^\$$`),
		[]string{"echo the quick brown fox", "ls -d /tmp", "echo helo\b\blo world", "print -r -- done", "cd /tmp && pwd", "true # jumps over the lazy dog"}},
	{"python3", []string{"/usr/bin/python3", "-q"}, "", regexp.MustCompile(`^>>>$`),
		[]string{"x = 21 * 2", "print(x + 1)", "'hello'.upper()", "sum(range(10))", "y = [i*i for i in range(5)]", "len(y)"}},
}

// sshEchoResult is one program's figures.
type sshEchoResult struct {
	name    string
	skipped string
	err     error
	typed   int             // keys, Enter included
	lat     []time.Duration // per timed key
	drawn   int             // timed keys first shown predicted (underlined)
	// left counts the cells wrong at the end; leftAt shows the first
	// row that differs (local, then the session's).
	left   int
	leftAt string
}

type sshEchoReport struct {
	keys     int
	skipped  string // why the section did not run
	err      error
	programs []*sshEchoResult
}

// runSSHEcho runs the section: one sshd, proxy and server, a session and
// an attach per program.
func runSSHEcho(ctx context.Context, e *env, cfg config) *sshEchoReport {
	rep := &sshEchoReport{keys: map[bool]int{true: quickSSHEchoKeys, false: fullSSHEchoKeys}[cfg.quick]}
	if why := testsshd.Missing(); why != "" {
		rep.skipped = why + ": apt-get install openssh-server"
		logf("predictive echo over ssh skipped: %s", rep.skipped)
		return rep
	}
	sshd, err := testsshd.Start(testsshd.Options{})
	if err != nil {
		rep.err = err
		return rep
	}
	defer sshd.Close()
	proxy, err := slowlink.Start(sshd.Port)
	if err != nil {
		rep.err = err
		return rep
	}
	defer proxy.Close()
	proxy.SetDelay(sshEchoDelay)
	srv, err := startServer(ctx, e.bin)
	if err != nil {
		rep.err = err
		return rep
	}
	defer srv.close()
	// sshd passes no environment: the remote termkeep is a script that
	// names the server's state directory.
	remote := filepath.Join(e.work, "remote-termkeep")
	script := fmt.Sprintf("#!/bin/sh\nexport TERMKEEP_STATE_DIR=%s TERMKEEP_LISTEN=off\nexec %s \"$@\"\n", shellQuote(string(srv.dir)), shellQuote(srv.termkeep()))
	if err := os.WriteFile(remote, []byte(script), 0o755); err != nil {
		rep.err = err
		return rep
	}
	// The sessions' HOME: no rc files of the user's (an empty .zshrc
	// keeps zsh from asking to write one).
	home := filepath.Join(e.work, "ssh-echo-home")
	os.MkdirAll(home, 0o700)
	os.WriteFile(filepath.Join(home, ".zshrc"), nil, 0o600)
	rig := &sshEchoRig{srv: srv, ssh: sshd.Through(sshd.SSH, proxy.Port()), remote: remote, home: home}
	logf("predictive echo over ssh: %d keys each into bash, zsh and python3, %v each way", rep.keys, sshEchoDelay)
	for _, p := range sshEchoPrograms {
		r := rig.run(ctx, p, rep.keys)
		rep.programs = append(rep.programs, r)
		logf("predictive echo over ssh: %s", r.summary())
		if ctx.Err() != nil {
			break
		}
	}
	return rep
}

// sshEchoRig is what every program's run shares.
type sshEchoRig struct {
	srv               *tkServer
	ssh, remote, home string
}

// run types keys keys into program p through attach over ssh.
func (rig *sshEchoRig) run(ctx context.Context, p sshEchoProgram, keys int) *sshEchoResult {
	r := &sshEchoResult{name: p.name}
	if _, err := os.Stat(p.command[0]); err != nil {
		r.skipped = p.command[0] + " is missing"
		return r
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	r.err = rig.typeInto(rctx, p, keys, r)
	return r
}

func (rig *sshEchoRig) typeInto(ctx context.Context, p sshEchoProgram, keys int, r *sshEchoResult) error {
	name := "echo-" + p.name
	if _, err := rig.srv.c.Create(ctx, api.CreateRequest{
		Name: name, Command: p.command, Cwd: rig.home, Cols: reproCols, Rows: reproRows,
		Env: os.Environ(), SetEnv: []string{"TERM=xterm-256color", "LANG=C.UTF-8", "HOME=" + rig.home},
	}); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	defer rig.srv.c.Kill(context.Background(), name)
	if p.setup != "" {
		if err := rig.srv.c.Input(ctx, name, []byte(p.setup+"\r")); err != nil {
			return err
		}
	}
	if err := rig.sessionPrompt(ctx, name, p.prompt); err != nil {
		return err
	}
	cmd := exec.Command(rig.srv.termkeep(), "attach", "127.0.0.1:"+name)
	cmd.Env = append(viewerEnv(), "TERMKEEP_SSH="+rig.ssh, "TERMKEEP_REMOTE_BIN="+rig.remote, "SSH_AUTH_SOCK=")
	ptmx, stop, err := reproClient(ctx, "termkeep attach over ssh", cmd)
	if err != nil {
		return err
	}
	defer stop()
	lt := newLocalTerm(ptmx)
	if err := lt.waitPrompt(ctx, p.prompt); err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	// The snapshot attach starts from carries no shell integration
	// marks: a prompt drawn since does. Then a pause for attach's pings
	// to measure the round trip that turns auto on (one a second).
	ptmx.Write([]byte("\r"))
	if err := lt.pump(ctx, time.Now().Add(2500*time.Millisecond), nil); err != nil {
		return err
	}
	if err := lt.waitPrompt(ctx, p.prompt); err != nil {
		return err
	}
	for n := 0; r.typed < keys; n++ {
		if err := lt.pump(ctx, time.Now().Add(sshEchoLinePause), nil); err != nil {
			return err
		}
		row, col := lt.cursor()
		for _, ch := range p.lines[n%len(p.lines)] {
			if ch == '\b' {
				col--
				if _, err := ptmx.Write([]byte{0x7f}); err != nil {
					return err
				}
			} else {
				lt.expect(row, col, string(ch))
				col++
				if _, err := ptmx.Write([]byte(string(ch))); err != nil {
					return err
				}
			}
			r.typed++
			pause := sshEchoKeyEvery + time.Duration((rand.Float64()*2-1)*float64(sshEchoJitter))
			if err := lt.pump(ctx, time.Now().Add(pause), nil); err != nil {
				return err
			}
		}
		// Every character drawn, then the line is run.
		if err := lt.pump(ctx, time.Now().Add(sshEchoWait), func() bool { return len(lt.pending) == 0 }); err != nil {
			return err
		}
		if len(lt.pending) > 0 {
			return fmt.Errorf("%q never showed at row %d, column %d", lt.pending[0].ch, lt.pending[0].row, lt.pending[0].col)
		}
		ptmx.Write([]byte("\r"))
		r.typed++
		if err := lt.waitPrompt(ctx, p.prompt); err != nil {
			return err
		}
	}
	// Quiet for a second: every echo and every prediction's deadline
	// is through.
	if err := lt.quiet(ctx, time.Second, 10*time.Second); err != nil {
		return err
	}
	r.lat, r.drawn = lt.lat, lt.drawn
	session, err := rig.srv.c.Screen(ctx, name, false, 0)
	if err != nil {
		return fmt.Errorf("the session's screen: %w", err)
	}
	r.left, r.leftAt = lt.wrongCells(session)
	return nil
}

// sessionPrompt waits until the session's own screen ends at its prompt.
func (rig *sshEchoRig) sessionPrompt(ctx context.Context, name string, prompt *regexp.Regexp) error {
	for deadline := time.Now().Add(sshEchoWait); ; {
		text, err := rig.srv.c.Screen(ctx, name, false, 0)
		if err != nil {
			return err
		}
		if prompt.MatchString(lastRow(text)) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the session shows no prompt within %v:\n%s", sshEchoWait, text)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// lastRow is the last row of a screen's text that is not blank, trimmed.
func lastRow(text string) string {
	rows := strings.Split(text, "\n")
	for i := len(rows) - 1; i >= 0; i-- {
		if r := strings.TrimSpace(rows[i]); r != "" {
			return r
		}
	}
	return ""
}

// localTerm is the terminal attach draws on: a screen model fed with
// what attach writes, each chunk stamped when it was read.
type localTerm struct {
	scr     *screen.Screen
	out     <-chan stampedChunk
	readErr *error
	pending []sshEchoExpect
	lat     []time.Duration
	drawn   int
	chunks  int // chunks fed
}

type stampedChunk struct {
	b  []byte
	at time.Time
}

// sshEchoExpect is a key typed whose character has yet to show at its cell.
type sshEchoExpect struct {
	row, col int
	ch       string
	typed    time.Time
}

func newLocalTerm(ptmx *os.File) *localTerm {
	ch := make(chan stampedChunk, 256)
	lt := &localTerm{scr: screen.New(reproCols, reproRows, screen.Options{}), out: ch, readErr: new(error)}
	go func() {
		defer close(ch)
		buf := make([]byte, 64<<10)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				ch <- stampedChunk{append([]byte(nil), buf[:n]...), time.Now()}
			}
			if err != nil {
				*lt.readErr = err
				return
			}
		}
	}()
	return lt
}

// expect times the key ch typed now at (row, col), unless the cell
// shows ch already (then its arrival cannot be seen): a space over a
// blank cell is not timed.
func (lt *localTerm) expect(row, col int, ch string) {
	have := " "
	if c, ok := lt.cell(lt.scr.Dump(0), row, col); ok && c.Ch != "" {
		have = c.Ch
	}
	if have == ch {
		return
	}
	lt.pending = append(lt.pending, sshEchoExpect{row: row, col: col, ch: ch, typed: time.Now()})
}

func (lt *localTerm) cell(d screen.Dump, row, col int) (screen.DumpCell, bool) {
	if row < 0 || row >= len(d.Screen) || col < 0 || col >= len(d.Screen[row].Cells) {
		return screen.DumpCell{}, false
	}
	return d.Screen[row].Cells[col], true
}

// pump feeds what attach writes to the screen until deadline, or until
// done (when not nil) holds.
func (lt *localTerm) pump(ctx context.Context, deadline time.Time, done func() bool) error {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for done == nil || !done() {
		select {
		case c, ok := <-lt.out:
			if !ok {
				return fmt.Errorf("attach's output ended: %v", *lt.readErr)
			}
			lt.feed(c)
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// feed draws a chunk, and takes the keys it shows.
func (lt *localTerm) feed(c stampedChunk) {
	lt.chunks++
	lt.scr.Write(c.b)
	if len(lt.pending) == 0 {
		return
	}
	d := lt.scr.Dump(0)
	left := lt.pending[:0]
	for _, x := range lt.pending {
		cell, ok := lt.cell(d, x.row, x.col)
		if !ok || cell.Ch != x.ch {
			left = append(left, x)
			continue
		}
		lt.lat = append(lt.lat, c.at.Sub(x.typed))
		if strings.Contains(cell.F, "u") {
			lt.drawn++
		}
	}
	lt.pending = left
}

// cursor is where the next key's character shows: attach draws
// predictions aside and puts the cursor back.
func (lt *localTerm) cursor() (row, col int) {
	x, y := lt.scr.CursorPosition()
	return y, x
}

// underlined counts the screen's underlined cells: predictions shown.
func underlined(d screen.Dump) int {
	n := 0
	for _, l := range d.Screen {
		for _, c := range l.Cells {
			if strings.Contains(c.F, "u") {
				n++
			}
		}
	}
	return n
}

// waitPrompt feeds the screen until its last row is the prompt and no
// prediction shows.
func (lt *localTerm) waitPrompt(ctx context.Context, prompt *regexp.Regexp) error {
	at := func() bool {
		return prompt.MatchString(lastRow(lt.scr.Text(0))) && underlined(lt.scr.Dump(0)) == 0
	}
	if err := lt.pump(ctx, time.Now().Add(sshEchoWait), at); err != nil {
		return err
	}
	if !at() {
		return fmt.Errorf("no prompt within %v; the screen:\n%s", sshEchoWait, lt.scr.Text(0))
	}
	return nil
}

// quiet feeds the screen until nothing came for d, for at most limit.
func (lt *localTerm) quiet(ctx context.Context, d, limit time.Duration) error {
	for end := time.Now().Add(limit); time.Now().Before(end); {
		before := lt.chunks
		if err := lt.pump(ctx, time.Now().Add(d), func() bool { return lt.chunks != before }); err != nil {
			return err
		}
		if lt.chunks == before {
			return nil
		}
	}
	return errors.New("attach's output never went quiet")
}

// wrongCells compares the local screen with the session's (its text):
// cells whose character differs, or that still show a prediction's
// underline. at shows the first row that differs.
func (lt *localTerm) wrongCells(session string) (n int, at string) {
	d := lt.scr.Dump(0)
	want := strings.Split(strings.TrimSuffix(session, "\n"), "\n")
	for y, l := range d.Screen {
		var w []rune
		if y < len(want) {
			w = []rune(want[y])
		}
		bad := 0
		var got strings.Builder
		// A dump trims a row's trailing blank cells.
		for x := range max(len(l.Cells), len(w)) {
			ch, have, under := " ", " ", false
			if x < len(w) {
				ch = string(w[x])
			}
			if x < len(l.Cells) {
				have, under = l.Cells[x].Ch, strings.Contains(l.Cells[x].F, "u")
			}
			if have == "" {
				have = " "
			}
			got.WriteString(have)
			if have != ch || under {
				bad++
			}
		}
		if bad > 0 && at == "" {
			at = fmt.Sprintf("row %d: %q, the session's %q", y, strings.TrimRight(got.String(), " "), strings.TrimRight(string(w), " "))
		}
		n += bad
	}
	return n, at
}

func (r *sshEchoResult) measured() bool { return r.skipped == "" && r.err == nil && len(r.lat) > 0 }

func (r *sshEchoResult) summary() string {
	switch {
	case r.skipped != "":
		return r.name + " skipped: " + r.skipped
	case r.err != nil:
		return r.name + " failed: " + r.err.Error()
	}
	s := fmt.Sprintf("%s: %d keys, perceived p50 %s p99 %s, %d of %d timed drawn predicted, %d cells wrong at the end",
		r.name, r.typed, fmtDur(durQuantile(r.lat, 0.5)), fmtDur(durQuantile(r.lat, 0.99)), r.drawn, len(r.lat), r.left)
	if r.leftAt != "" {
		s += " (" + r.leftAt + ")"
	}
	return s
}

// durQuantile is quantile for durations.
func durQuantile(xs []time.Duration, q float64) time.Duration {
	f := make([]float64, len(xs))
	for i, x := range xs {
		f[i] = float64(x)
	}
	return time.Duration(quantile(f, q))
}
