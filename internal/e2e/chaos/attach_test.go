package chaos

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// chaosKnobs are the chaos run's sizes: TK_ATTACH_CHAOS_KILLS,
// TK_ATTACH_CHAOS_RATE (lines a second) and TK_ATTACH_CHAOS_GAP (output
// between a reconnect and the next kill) scale it; make soak runs 100
// kills.
func chaosKnobs() (kills, rate int, gap time.Duration) {
	// make test's run: a server start under -race on a busy 2-core
	// machine takes seconds, so 20 kills a variant would take minutes.
	// docs/reliability.md records the 20-kill runs; make soak runs 100.
	kills, rate, gap = 8, 6000, 150*time.Millisecond
	if e2e.SoakMode() {
		kills = 100
	}
	if n, err := strconv.Atoi(os.Getenv("TK_ATTACH_CHAOS_KILLS")); err == nil && n >= 0 {
		kills = n
	}
	if n, err := strconv.Atoi(os.Getenv("TK_ATTACH_CHAOS_RATE")); err == nil && n > 0 {
		rate = n
	}
	if d, err := time.ParseDuration(os.Getenv("TK_ATTACH_CHAOS_GAP")); err == nil && d > 0 {
		gap = d
	}
	return kills, rate, gap
}

// TestAttachCrashLoopTmux runs attach in a real terminal (a tmux pane)
// while its session prints numbered lines at thousands a second and the
// server is SIGKILLed again and again, attach starting it again each
// time; then the pane's scrollback and screen must hold every line from
// the first shown to the last, once each and in order, what a user
// scrolling back reads. A --read-only attach, which draws the session
// at its own size, must end on the session's screen.
func TestAttachCrashLoopTmux(t *testing.T) {
	e2e.SkipShort(t)
	kills, rate, gap := chaosKnobs()
	for _, v := range []struct {
		name       string
		cols, rows int
		env        string // before attach, and the first server's
		flags      string
		readOnly   bool
		// half: half the kills; the lanes' variants have them all.
		half bool
	}{
		{name: "own size", cols: 80, rows: 24},
		{name: "other size", cols: 100, rows: 30},
		{name: "lanes off", cols: 80, rows: 24, env: "TERMKEEP_ECHO_LANE=off", half: true},
		{name: "read-only other size", cols: 100, rows: 30, flags: "--read-only", readOnly: true, half: true},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel() // each waits on servers starting more than it works
			kills := kills
			if v.half && !e2e.SoakMode() {
				kills = (kills + 1) / 2
			}
			e := e2e.NewEnv(t)
			if v.env != "" {
				e.ServerEnv = append(e.ServerEnv, v.env)
			}
			e.StartServer()
			id := strings.TrimSpace(e.MustTk("new", "--name", "chaos", "--size", "80x24",
				"--env", "TK_CHILD=numbered", "--env", "TK_RATE="+strconv.Itoa(rate), "--", e2e.SelfBin))
			e.WaitRaw(id)
			// Each kill adds about 1.5 s of lines; the pane keeps them all.
			history := max(500000, rate*(kills+10)*3)
			command := fmt.Sprintf("env %s %s --state-dir %s attach %s chaos; echo ATTACH-EXIT $?",
				v.env, e2e.TkBin, e.Dir, v.flags)
			p := e2e.StartTmux(t, v.cols, v.rows, history, command)
			e2e.WaitFor(t, 20*time.Second, "attach to connect", func() bool { return e.Session("chaos").Viewers == 1 })
			e.MustTk("send", "chaos", "-l", "g")

			began := time.Now()
			for i := range kills {
				time.Sleep(gap) // output flows between kills
				h, err := e.C.Health(context.Background())
				if err != nil {
					t.Fatalf("kill %d: no server: %v", i+1, err)
				}
				if e.Srv != nil {
					e.KillServer() // the test's own; attach starts the rest
				} else if err := syscall.Kill(h.Pid, syscall.SIGKILL); err != nil {
					t.Fatalf("kill %d: %v", i+1, err)
				}
				// Reconnected: a server other than the killed one, with
				// attach among its viewers again.
				e2e.WaitFor(t, 30*time.Second, fmt.Sprintf("attach to reconnect after kill %d", i+1), func() bool {
					now, err := e.C.Health(context.Background())
					if err != nil || now.Pid == h.Pid {
						return false
					}
					s, err := e.C.Get(context.Background(), "chaos")
					return err == nil && s.Viewers == 1
				})
			}
			time.Sleep(gap)
			e.MustTk("send", "chaos", "-l", "s")
			p.WaitShows("END ", 60*time.Second)
			took := time.Since(began)
			sess := e.Session("chaos")

			if v.readOnly {
				checkSameScreen(t, e, p, sess.Cols, sess.Rows)
				return
			}
			rows := p.Capture(true)
			c := e2e.CountNumbered(rows)
			// attach's own lines (connection lost, reconnected, skipped):
			// how many, and each kind once.
			notices, kinds := 0, map[string]bool{}
			for _, r := range rows {
				if strings.Contains(r, "[termkeep") || strings.Contains(r, "skipped") || strings.Contains(r, "resync") {
					notices++
					kinds[strings.TrimSpace(r)] = true
				}
			}
			said := slices.Sorted(maps.Keys(kinds))
			t.Logf("SUMMARY attach crash loop in tmux (%s, pane %dx%d): %d kills in %s at %d lines/s; %s; %d notices of attach; %d resyncs",
				v.name, v.cols, v.rows, kills, took.Round(time.Millisecond), rate, c, notices, sess.Resyncs)
			if c.Lines == 0 || c.Missing != 0 || c.Repeated != 0 || c.Backwards != 0 || c.Torn != 0 {
				t.Errorf("the pane's scrollback and screen do not hold every line once and in order: %s (%d kills; %d notices of attach: %q; %d resyncs by the server)\nits last rows:\n%s",
					c, kills, notices, said[:min(len(said), 6)], sess.Resyncs, strings.Join(rows[max(0, len(rows)-v.rows-5):], "\n"))
			}
		})
	}
}

// lines is text's first n rows, without trailing blanks.
func lines(text string, n int) []string {
	rs := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	out := make([]string, n)
	for i := range min(n, len(rs)) {
		out[i] = strings.TrimRight(rs[i], " ")
	}
	return out
}

// checkSameScreen checks that the pane shows the session's screen (of
// cols x rows) in its top left corner.
func checkSameScreen(t *testing.T, e *e2e.Env, p *e2e.Tmux, cols, rows int) {
	t.Helper()
	want := lines(e.MustTk("capture", "chaos"), rows)
	var got []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got = p.Capture(false)
		for i, r := range got {
			r = string([]rune(r)[:min(len([]rune(r)), cols)])
			got[i] = strings.TrimRight(r, " ")
		}
		got = append(got, make([]string, rows)...)[:rows]
		if strings.Join(got, "\n") == strings.Join(want, "\n") || time.Now().After(deadline) {
			break
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the read-only attach's pane is not the session's screen:\n--- pane (its top left %dx%d)\n%s\n--- session\n%s\n--- whole pane\n%s",
			cols, rows, strings.Join(got, "\n"), strings.Join(want, "\n"), strings.Join(p.Capture(false), "\n"))
	}
}

// An attach that fails (no such session) leaves what the terminal showed
// before it as it was, its error and the shell's next output below.
func TestAttachFailureKeepsTerminal(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	p := e2e.StartTmux(t, 80, 24, 10000, fmt.Sprintf("seq 1 30; %s --state-dir %s attach nosuch; echo AFTER", e2e.TkBin, e.Dir))
	p.WaitShows("AFTER", 20*time.Second)
	rows := p.Capture(true)
	// tmux's own last line: the pane's shell has exited.
	for len(rows) > 0 && (rows[len(rows)-1] == "" || strings.HasPrefix(rows[len(rows)-1], "Pane is dead")) {
		rows = rows[:len(rows)-1]
	}
	want := make([]string, 0, 32)
	for n := 1; n <= 30; n++ {
		want = append(want, strconv.Itoa(n))
	}
	ok := len(rows) >= 32 && strings.Join(rows[:30], "\n") == strings.Join(want, "\n") &&
		strings.Contains(strings.Join(rows[30:len(rows)-1], "\n"), "nosuch") && rows[len(rows)-1] == "AFTER"
	if !ok {
		t.Fatalf("the failed attach did not leave lines 1..30, its error, then AFTER; the pane holds:\n%s", strings.Join(rows, "\n"))
	}
}
