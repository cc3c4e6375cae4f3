package cli

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/screen"
	"termkeep/internal/wire"
)

// startLaneTerm is attach in a real pty of 80x24 (attachPty.screen's size).
func startLaneTerm(t *testing.T, e *e2e.Env, ref string, flags ...string) *attachPty {
	t.Helper()
	return runAttach(t, append(append([]string{"--state-dir", e.Dir, "attach"}, flags...), ref), 80, 24)
}

func (a *attachPty) typ(s string) {
	a.t.Helper()
	if _, err := a.pty.Write([]byte(s)); err != nil {
		a.t.Fatal(err)
	}
}

// screen is attach's terminal as an emulator shows it after every byte
// attach's terminal got.
func (a *attachPty) screen() []string {
	s := screen.New(80, 24, screen.Options{ScrollbackLines: -1})
	s.Write(a.bytes())
	return lines(s.Text(0), 24)
}

// sameScreen waits until attach's terminal shows the session's screen,
// row for row.
func sameScreen(t *testing.T, e *e2e.Env, a *attachPty, ref string) {
	t.Helper()
	var got, want []string
	ok := false
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		txt, err := e.C.Screen(context.Background(), ref, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		want, got = lines(txt, 24), a.screen()
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			ok = true
			break
		}
	}
	if !ok {
		t.Fatalf("attach's terminal is not the session's screen:\n--- terminal\n%s\n--- session\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// numbered checks that the lines lo..hi are on attach's terminal, in its
// scrollback and screen as an emulator fed every byte it got shows them,
// each once and in order, with nothing else between them: no line lost,
// none drawn twice, and nothing of attach's own (a notice) among them.
func numbered(t *testing.T, out []byte, lo, hi int) {
	t.Helper()
	s := screen.New(80, 24, screen.Options{ScrollbackLines: 1 << 22})
	s.Write(out)
	rows := strings.Split(s.Text(s.ScrollbackLines()), "\n")
	start := slices.Index(rows, strconv.Itoa(lo))
	if start < 0 {
		t.Fatalf("no line %d on attach's terminal (%d lines, the first: %q)", lo, len(rows), rows[:min(len(rows), 40)])
	}
	for i, n := start, lo; n <= hi; i, n = i+1, n+1 {
		if i >= len(rows) || rows[i] != strconv.Itoa(n) {
			got := "the end"
			if i < len(rows) {
				got = strconv.Quote(rows[i])
			}
			t.Fatalf("after line %d attach's terminal shows %s, want %d", n-1, got, n)
		}
	}
	if rest := strings.Join(rows[start+hi-lo+1:], "\n"); strings.Contains("\n"+rest+"\n", "\n"+strconv.Itoa(lo)+"\n") {
		t.Fatalf("line %d is on attach's terminal twice", lo)
	}
}

// metric is the server's metric name (with labels, name and value in
// turn) now.
func metric(t *testing.T, e *e2e.Env, name string, labels ...string) float64 {
	t.Helper()
	_, body := e.UnixGet("/metrics")
	return e2e.ParseMetrics(t, body).Value(t, name, labels...)
}

func laneMetric(t *testing.T, e *e2e.Env, result string) float64 {
	t.Helper()
	return metric(t, e, "termkeep_lanes_total", "result", result)
}

func laneBytes(t *testing.T, e *e2e.Env) float64 {
	t.Helper()
	return metric(t, e, "termkeep_lane_bytes_total")
}

// The owner's attach gets an output lane, and its terminal gets every
// byte once and in order, through a flood, a terminal that stops reading,
// a resize from another viewer, a detach and a reattach, and the server
// killed mid-flood; its screen is the session's after each.
func TestAttachLane(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	e.TkEnv([]string{"PS1=$ "}, "", "new", "--name", "l", "--", "sh")
	a := startLaneTerm(t, e, "l")
	a.waitOutput("$ ")
	a.typ("echo one-$((1+1))\r")
	a.waitOutput("one-2")
	e2e.WaitFor(t, 10*time.Second, "a lane to open", func() bool { return laneMetric(t, e, "opened") >= 1 })

	// A flood through the lane: every line once, in order.
	a.typ("seq 1 30000; echo flood-$((1+1))\r")
	a.waitOutput("flood-2")
	numbered(t, a.bytes(), 1, 30000)
	sameScreen(t, e, a, "l")

	// A terminal that stops reading: the child goes on at its pace, the
	// log keeps everything, and the screen is right once it reads again.
	a.pause(true)
	a.typ("seq 100001 160000; echo stalled-$((1+1))\r")
	began := time.Now()
	if out, errs, code := e.Tk("wait", "l", "--from", "start", "--output", "stalled-2", "--timeout", "20s"); code != 0 {
		scr, _ := e.C.Screen(context.Background(), "l", false, 0)
		t.Fatalf("the session did not finish while attach's terminal was stopped (%d): %s %s\n%s", code, out, errs, scr)
	}
	took := time.Since(began)
	a.pause(false)
	raw := e.MustTk("capture", "l", "--raw")
	for _, n := range []int{100001, 130000, 160000} {
		if !strings.Contains(raw, "\r\n"+strconv.Itoa(n)+"\r\n") {
			t.Fatalf("the log lacks line %d", n)
		}
	}
	if strings.Count(raw, "\r\n") < 90000 {
		t.Fatalf("the log has %d lines, want over 90000", strings.Count(raw, "\r\n"))
	}
	a.waitOutput("stalled-2")
	sameScreen(t, e, a, "l")
	t.Logf("60000 lines printed in %s with attach's terminal stopped", took.Round(time.Millisecond))

	// Another viewer takes the size: the lane is revoked (attach draws
	// the session clipped); typing in attach takes it back, and a lane
	// opens again.
	s, err := e.C.Attach(context.Background(), "l", wire.Hello{Role: wire.RoleViewer, From: wire.FromEnd, Cols: 100, Rows: 30, Fit: true})
	if err != nil {
		t.Fatal(err)
	}
	e2e.WaitFor(t, 10*time.Second, "the session at 100x30", func() bool { return e.Session("l").Cols == 100 })
	s.Close()
	opened := laneMetric(t, e, "opened")
	a.typ("echo back-$((2+3))\r")
	a.waitOutput("back-5")
	e2e.WaitFor(t, 10*time.Second, "the session at 80x24 again", func() bool { return e.Session("l").Cols == 80 })
	a.typ("echo again-$((3+3))\r")
	a.waitOutput("again-6")
	// attach offers its terminal again after output it has written; in
	// the full suite a lane has been seen to take more of it to reopen.
	nudged := 0
	e2e.WaitFor(t, 30*time.Second, "a lane again", func() bool {
		if laneMetric(t, e, "opened") > opened {
			return true
		}
		nudged++
		if nudged%20 == 0 {
			a.typ("true\r")
		}
		return false
	})
	if nudged >= 20 {
		t.Logf("the lane reopened only after %d more lines typed", nudged/20)
	}
	sameScreen(t, e, a, "l")

	// The program takes the alternate screen by the lane: attach follows
	// it, and leaves it at the detach.
	before := laneBytes(t, e)
	a.typ("printf '\\033[?1049hALT-%d' 7\r")
	a.waitOutput("ALT-7")

	// Detach: the lane ends before attach's own lines; the lane's bytes
	// were counted.
	a.typ("\x1c")
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		t.Fatal("attach did not detach")
	}
	if !bytes.Contains(a.bytes(), []byte("[termkeep: detached from l]")) {
		t.Fatalf("no farewell on attach's terminal: %q", e2e.Tail(a.bytes(), 200))
	}
	if laneBytes(t, e) <= before {
		t.Fatal("the switch to the alternate screen did not go by the lane")
	}
	end := screen.New(80, 24, screen.Options{ScrollbackLines: -1})
	end.Write(a.bytes())
	if end.AltScreen() {
		t.Fatal("the detach left the terminal in the alternate screen the lane switched to")
	}
	// A flood outruns the terminal now and then, which ends a lane; the
	// next one opens once attach has caught up.
	n := laneBytes(t, e)
	if n == 0 {
		t.Fatal("no lane wrote a byte")
	}
	t.Logf("lanes wrote %v bytes; %v lanes ended having written, %v refused", n, laneMetric(t, e, "wrote"), laneMetric(t, e, "refused"))

	// Reattach, then kill the server mid-flood, three times: attach
	// resumes where its terminal's last byte was (a lane's included),
	// every line once and in order, and nothing drawn again.
	a = startLaneTerm(t, e, "l")
	a.waitOutput("again-6")
	// Back on the normal screen, where the lines go into the scrollback.
	a.typ("printf '\\033[?1049l'; seq 1 200000; echo killed-$((2+2))\r")
	for _, at := range []string{"5000", "40000", "90000"} {
		a.waitOutput("\r\n" + at + "\r\n")
		e.KillServer()
		e.StartServer()
	}
	a.waitOutput("killed-4")
	numbered(t, a.bytes(), 1, 200000)
	sameScreen(t, e, a, "l")
}

// A read-only attach never gets a lane; a holder with lanes off
// (TERMKEEP_ECHO_LANE=off) refuses every one, and attach works as before.
func TestAttachLaneNever(t *testing.T) {
	e := e2e.NewEnv(t)
	e.ServerEnv = []string{"TERMKEEP_ECHO_LANE=off"}
	e.StartServer()
	e.TkEnv([]string{"PS1=$ "}, "", "new", "--name", "r", "--", "sh")
	ro := startLaneTerm(t, e, "r", "--read-only")
	e.MustTk("send", "r", "echo read-only-$((1+1))")
	ro.waitOutput("read-only-2")
	time.Sleep(200 * time.Millisecond) // time to offer, were it to
	if n := laneMetric(t, e, "opened"); n != 0 {
		t.Fatalf("a read-only attach got %v lanes", n)
	}
	a := startLaneTerm(t, e, "r")
	a.typ("seq 1 3000; echo off-$((1+1))\r")
	a.waitOutput("off-2")
	numbered(t, a.bytes(), 1, 3000)
	e2e.WaitFor(t, 10*time.Second, "a refused lane", func() bool { return laneMetric(t, e, "refused") >= 1 })
	if n := laneMetric(t, e, "wrote"); n != 0 {
		t.Fatalf("%v lanes wrote with lanes off", n)
	}
	sameScreen(t, e, a, "r")
	sameScreen(t, e, ro, "r")
}
