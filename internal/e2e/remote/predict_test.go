package remote

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
)

// setDelay holds every chunk d each way on the connections made from now.
func (p *stallProxy) setDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// delayed copies src to dst, each chunk written delay after it was read,
// in order; dst's writing half is closed at src's end.
func (p *stallProxy) delayed(dst, src net.Conn, delay time.Duration) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	ch := make(chan chunk, 1024)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(ch)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				ch <- chunk{buf[:n], time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		time.Sleep(time.Until(c.at.Add(delay)))
		if _, err := dst.Write(c.b); err != nil {
			src.Close()
			for range ch {
			}
			return
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

// Over a link 250 ms away each way, attach (--predict auto) shows what is
// typed at bash's prompt before its echo could have come back, underlined;
// once the echo has come, the line is exactly what bash drew: no doubled
// character, no underline left.
func TestRemotePredictiveEcho(t *testing.T) {
	t.Parallel()
	const delay = 250 * time.Millisecond
	s := startSSHD(t)
	e := e2e.NewEnv(t)
	bin := remoteBin(t, e)
	proxy := startProxy(t, s.port)
	proxy.setDelay(delay)
	ssh := strings.Replace(s.ssh, "-p "+strconv.Itoa(s.port), "-p "+strconv.Itoa(proxy.port()), 1)
	mustTk(t, s.ssh, bin, "new", host+":", "--name", "sh", "--env", "PS1=P> ", "--", "/bin/bash", "--norc", "--noprofile", "-i")
	p := attachPane(t, ssh, bin, "sh")
	e2e.WaitFor(t, 30*time.Second, "attach to connect", func() bool { return e.Session("sh").Viewers == 1 })
	p.WaitShows("P>", 30*time.Second)
	// Silence, which attach pings through (one a second): its first pong
	// measures the round trip that turns auto on. No frame says when.
	time.Sleep(2 * time.Second)

	// Without shell integration, keys echoed as predicted earn the
	// confidence to show the next ones.
	line := "P> "
	for _, k := range "echo " {
		line += string(k)
		p.SendKeys("-l", string(k))
		p.WaitShows(strings.TrimRight(line, " "), 10*time.Second)
		e2e.WaitFor(t, 10*time.Second, "the echo", func() bool { return !strings.Contains(p.CaptureStyled(), "\x1b[4m") })
	}
	for _, k := range "xyz" {
		line += string(k)
		sent := time.Now()
		p.SendKeys("-l", string(k))
		p.WaitShows(line, 10*time.Second)
		if took := time.Since(sent); took >= 2*delay {
			t.Errorf("%q showed %s after it was typed: not before its echo could come (%s)", k, took.Round(time.Millisecond), 2*delay)
		} else {
			t.Logf("%q showed %s after it was typed", k, took.Round(time.Millisecond))
		}
		if styled := p.CaptureStyled(); !strings.Contains(styled, "\x1b[4m"+string(k)) {
			t.Errorf("%q is not shown underlined before its echo:\n%q", k, styled)
		}
		e2e.WaitFor(t, 10*time.Second, "the echo", func() bool { return !strings.Contains(p.CaptureStyled(), "\x1b[4m") })
	}
	if rows := p.Capture(false); !strings.Contains(strings.Join(rows, "\n"), line) || strings.Contains(strings.Join(rows, "\n"), line+"z") {
		t.Errorf("the line is not %q:\n%s", line, strings.Join(rows, "\n"))
	}
	p.SendKeys("Enter")
	e2e.WaitFor(t, 10*time.Second, "the command's output", func() bool { return slices.Contains(p.Capture(false), "xyz") })
}
