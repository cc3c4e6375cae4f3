package remote

import (
	"slices"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// Over a link 250 ms away each way, attach (--predict auto) shows what is
// typed at bash's prompt before its echo could have come back, underlined;
// once the echo has come, the line is exactly what bash drew: no doubled
// character, no underline left. Without shell integration keys must first
// echo as predicted; with it, the first key at a prompt shows at once,
// and so does the first at the next prompt after a command.
func TestRemotePredictiveEcho(t *testing.T) {
	t.Parallel()
	const delay = 500 * time.Millisecond
	s := startSSHD(t)
	proxy := startProxy(t, s)
	proxy.SetDelay(delay)
	ssh := proxy.via(s.SSH)
	attach := func(t *testing.T, args ...string) *e2e.Tmux {
		e := e2e.NewEnv(t)
		bin := remoteBin(t, e)
		mustTk(t, s.SSH, bin, append([]string{"new", host + ":", "--name", "sh"}, args...)...)
		p := attachPane(t, ssh, bin, "sh")
		e2e.WaitFor(t, 30*time.Second, "attach to connect", func() bool { return e.Session("sh").Viewers == 1 })
		return p
	}
	t.Run("without integration", func(t *testing.T) {
		t.Parallel()
		p := attach(t, "--env", "PS1=P> ", "--", "/bin/bash", "--norc", "--noprofile", "-i")
		p.WaitShows("P>", 30*time.Second)
		pinged(delay)
		// Keys echoed as predicted earn the confidence to show the next ones.
		line := "P> "
		for _, k := range "echo " {
			line += string(k)
			p.SendKeys("-l", string(k))
			p.WaitShows(strings.TrimRight(line, " "), 10*time.Second)
			echoed(t, p)
		}
		for _, k := range "xyz" {
			typedAhead(t, p, &line, k, 2*delay)
		}
		p.SendKeys("Enter")
		e2e.WaitFor(t, 10*time.Second, "the command's output", func() bool { return slices.Contains(p.Capture(false), "xyz") })
	})
	t.Run("with integration", func(t *testing.T) {
		t.Parallel()
		p := attach(t, "--env", "HOME="+t.TempDir(), "--", "/bin/bash")
		first := prompt(t, p)
		pinged(delay)
		// The snapshot attach starts from carries no marks: a prompt
		// drawn since does.
		p.SendKeys("Enter")
		e2e.WaitFor(t, 10*time.Second, "a second prompt", func() bool {
			return strings.Count(strings.Join(p.Capture(false), "\n"), strings.TrimSpace(first)) >= 2
		})
		line := prompt(t, p)
		for _, k := range "echo zz" {
			typedAhead(t, p, &line, k, 2*delay)
		}
		p.SendKeys("Enter")
		e2e.WaitFor(t, 10*time.Second, "the command's output and a prompt", func() bool {
			rows := p.Capture(false)
			return slices.Contains(rows, "zz") && lastRow(rows) != "zz"
		})
		line = prompt(t, p)
		typedAhead(t, p, &line, 'x', 2*delay)
	})
}

// pinged waits through the silence attach pings in (one a second) and
// the round trip of its first pong, which turns auto on (delay each way).
// No frame says when.
func pinged(delay time.Duration) { time.Sleep(time.Second + 2*delay + time.Second) }

// prompt waits for bash's prompt on the pane's last row, and returns it.
func prompt(t *testing.T, p *e2e.Tmux) string {
	var row string
	e2e.WaitFor(t, 30*time.Second, "a prompt", func() bool {
		row = lastRow(p.Capture(false))
		return strings.HasSuffix(row, "$") || strings.HasSuffix(row, "#")
	})
	return row + " "
}

func lastRow(rows []string) string {
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i] != "" {
			return rows[i]
		}
	}
	return ""
}

// typedAhead types k at the end of line and checks that it shows,
// underlined (a space's underline tmux does not show at a line's end),
// before its echo could come (within rtt), then that its echo
// leaves the line as it should be: k once, no underline.
func typedAhead(t *testing.T, p *e2e.Tmux, line *string, k rune, rtt time.Duration) {
	t.Helper()
	*line += string(k)
	want := strings.TrimRight(*line, " ")
	sent := time.Now()
	p.SendKeys("-l", string(k))
	p.WaitShows(want, 10*time.Second)
	took := time.Since(sent)
	t.Logf("%q showed %s after it was typed", k, took.Round(time.Millisecond))
	// Underlined, it is drawn as predicted: before its echo, which takes
	// the underline away. A space's underline does not show, so its time
	// says it (the time also counts tmux's send-keys and capture-pane,
	// slow on a busy machine).
	if styled := p.CaptureStyled(); k != ' ' && !strings.Contains(styled, "\x1b[4m"+string(k)) {
		t.Errorf("%q is not shown underlined before its echo (%s after it was typed):\n%q", k, took.Round(time.Millisecond), styled)
	} else if k == ' ' && took >= rtt {
		t.Errorf("%q showed %s after it was typed: not before its echo could come (%s)", k, took.Round(time.Millisecond), rtt)
	}
	echoed(t, p)
	if got := lastRow(p.Capture(false)); got != want {
		t.Errorf("after the echo the line is %q, not %q", got, want)
	}
}

// echoed waits until no predicted cell is left on the pane.
func echoed(t *testing.T, p *e2e.Tmux) {
	t.Helper()
	e2e.WaitFor(t, 10*time.Second, "the echo", func() bool { return !strings.Contains(p.CaptureStyled(), "\x1b[4m") })
}
