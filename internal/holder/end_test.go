package holder

import (
	"bufio"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// How a session ends, through a real holder: the connected server gets the
// last byte, then the Exit frame, and meta.json records the same end. Each
// script waits for a line from the server, which is connected by then: a
// child that ended first would leave no socket to connect to.
func TestSessionEnd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		close  bool // the server sends a Close frame
		state  string
		code   int
		sig    int
		tail   string // the output ends with this
	}{
		{"exit status", "printf bye; exit 3", false, "exited", 3, 0, "bye"},
		{"killed from outside", "printf bye; kill -KILL $$", false, "exited", 137, 9, "bye"},
		{"closed on purpose", "printf ready; read x", true, "closed", 129, 1, "ready"},
		{"a background job left behind", "printf bye; (trap '' HUP; for i in $(seq 100); do printf .; sleep 0.01; done) & exit 0", false, "exited", 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := startHolder(t, "read -r go; "+tc.script, 0)
			s, _ := th.connect(0)
			s.w.Input([]byte("\n"))
			st := &stream{}
			if tc.close {
				s.readTo(st, uint64(len(tc.tail)))
				s.w.Close(100)
			}
			s.readTo(st, 1<<62)
			if st.exit == nil || st.exit.State != tc.state || *st.exit.ExitCode != tc.code || st.exit.Signal != tc.sig || st.exit.End != st.end() {
				t.Fatalf("exit %+v at %d, want %s %d signal %d at the stream's end %d", st.exit, st.exit.End, tc.state, tc.code, tc.sig, st.end())
			}
			if len(st.data) < len(tc.tail) || string(st.data[len(st.data)-len(tc.tail):]) != tc.tail {
				t.Fatalf("output %q does not end with %q", st.data, tc.tail)
			}
			m, err := th.endedMeta()
			if err != nil || m.EndedAt == nil || *m.ExitCode != tc.code || m.Signal != tc.sig || m.Closed != tc.close || m.End != st.end() {
				t.Fatalf("meta.json %+v, %v; want the same end as the Exit frame", m, err)
			}
		})
	}
}

// ended's table: meta.json and the Exit frame agree on the end judgeEnd
// decided; an interrupted end records no exit status.
func TestEnded(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))
	for _, tc := range []struct {
		state, reason string
		code, sig     int
		want          string
	}{
		{"exited", "", 0, 0, "exited 0/0 closed=false interrupted=false"},
		{"exited", "", 130, 2, "exited 130/2 closed=false interrupted=false"},
		{"closed", "", 129, 1, "closed 129/1 closed=true interrupted=false"},
		{"closed", "", 0, 0, "closed 0/0 closed=true interrupted=false"}, // closed, and the child exited by itself meanwhile
		{"interrupted", stopReason, 129, 1, "interrupted none/0 closed=false interrupted=true"},
		{"interrupted", stopReason, 0, 0, "interrupted none/0 closed=false interrupted=true"},
	} {
		m, e := ended(sessiondir.Meta{ID: "s", Cols: 80}, tc.state, tc.reason, tc.code, tc.sig, 42, now)
		status := func(c *int, sig int) string {
			if c == nil {
				return fmt.Sprintf("none/%d", sig)
			}
			return fmt.Sprintf("%d/%d", *c, sig)
		}
		if got := fmt.Sprintf("%s %s closed=%v interrupted=%v", e.State, status(e.ExitCode, e.Signal), m.Closed, m.Interrupted); got != tc.want || e.End != 42 || e.Reason != tc.reason {
			t.Errorf("exit %s at %d (%q), want %s at 42 (%q)", got, e.End, e.Reason, tc.want, tc.reason)
		}
		if m.ID != "s" || m.Cols != 80 || !m.EndedAt.Equal(now) || m.EndedAt.Location() != time.UTC || m.State() != tc.state ||
			status(m.ExitCode, m.Signal) != status(e.ExitCode, e.Signal) || m.Reason != tc.reason || m.End != 42 {
			t.Errorf("meta %+v, want the Exit frame's end %+v", m, e)
		}
	}
}

// drainOver's table. Without a linger the drain stops at the first
// quiet look, or after drainMax however busy the pty. With one, it reads
// for the whole linger, quiet or not. Hung up, it waits for SIGKILL (the
// grace) and drainMax more, whatever the linger.
func TestDrainOver(t *testing.T) {
	const linger = 60 * time.Second
	for _, tc := range []struct {
		name string
		f    drainFacts
		want bool
	}{
		{"no linger: quiet at the first look", drainFacts{since: drainLook, last: 10, end: 10}, true},
		{"no linger: still writing", drainFacts{since: drainLook, last: 10, end: 20}, false},
		{"no linger: busy just under drainMax", drainFacts{since: drainMax - time.Nanosecond, end: 1 << 30}, false},
		{"no linger: a writer that never stops", drainFacts{since: drainMax, end: 1 << 30}, true},
		{"no linger: a look that came late", drainFacts{since: 10 * drainMax, last: 5, end: 6}, true},
		{"no linger: nothing at all", drainFacts{}, true},
		{"linger: quiet for a moment", drainFacts{linger: linger, since: drainLook, last: 10, end: 10}, false},
		{"linger: quiet for longer than drainMax", drainFacts{linger: linger, since: 30 * time.Second, last: 10, end: 10}, false},
		{"linger: writing past drainMax", drainFacts{linger: linger, since: 3 * drainMax, end: 1 << 30}, false},
		{"linger: just under", drainFacts{linger: linger, since: linger - time.Nanosecond, last: 1, end: 2}, false},
		{"linger: over, still writing", drainFacts{linger: linger, since: linger, last: 1, end: 2}, true},
		{"linger: over long ago", drainFacts{linger: linger, since: 100 * linger, last: 1, end: 1}, true},
		{"a negative linger is none", drainFacts{linger: -time.Second, since: drainLook, last: 3, end: 3}, true},
		{"hung up: quiet, before SIGKILL", drainFacts{linger: linger, since: time.Second, hungUp: true, sinceHangUp: time.Second, grace: 5 * time.Second, last: 1, end: 1}, false},
		{"hung up: without a linger, quiet before SIGKILL", drainFacts{since: time.Second, hungUp: true, sinceHangUp: time.Second, grace: 5 * time.Second, last: 1, end: 1}, false},
		{"hung up: SIGKILL just sent", drainFacts{hungUp: true, sinceHangUp: 5 * time.Second, grace: 5 * time.Second}, false},
		{"hung up: drainMax after SIGKILL", drainFacts{hungUp: true, sinceHangUp: 5*time.Second + drainMax, grace: 5 * time.Second}, true},
		{"hung up: no grace", drainFacts{hungUp: true, sinceHangUp: drainMax, end: 9}, true},
		{"hung up before the linger's end, which passes", drainFacts{linger: time.Second, since: 2 * time.Second, hungUp: true, sinceHangUp: 1500 * time.Millisecond, grace: 5 * time.Second}, false},
	} {
		if got := drainOver(tc.f); got != tc.want {
			t.Errorf("%s: drainOver(%+v) = %v, want %v", tc.name, tc.f, got, tc.want)
		}
	}
}

// judgeEnd's table: who ended the session, from the child's status, the
// time it was reaped, and the time of the holder's own SIGTERM (if any).
func TestJudgeEnd(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	const s = time.Second
	none := time.Time{}
	for _, tc := range []struct {
		name      string
		closing   bool
		code, sig int
		died      time.Duration // after t0
		stopAt    time.Time     // the holder's SIGTERM; zero: none
		now       time.Duration // after t0
		state     string        // "" while it cannot tell
		wait      time.Duration
		reasonHas string
	}{
		// The holder's SIGTERM came first: whatever the child did then
		// answered the stop (the holder hung it up), but exit 0, which
		// says the work is done.
		{"hung up after the holder's SIGTERM", false, 129, 1, 1 * s, at(0), 1 * s, "interrupted", 0, "stopped by SIGTERM: the machine or service stopping"},
		{"a shell that answers SIGHUP with a status", false, 129, 0, 1 * s, at(0), 1 * s, "interrupted", 0, "stopped by SIGTERM"},
		{"an editor that answers SIGHUP with exit 1", false, 1, 0, s / 2, at(0), s / 2, "interrupted", 0, "stopped by SIGTERM"},
		{"exit 0 just after SIGTERM", false, 0, 0, s / 2, at(0), s / 2, "exited", 0, ""},
		{"exit 0 at the very moment of SIGTERM", false, 0, 0, 0, at(0), 0, "exited", 0, ""},
		{"killed by the holder's SIGKILL, long after", false, 137, 9, 30 * s, at(0), 30 * s, "interrupted", 0, "stopped by SIGTERM"},
		{"at the very moment of SIGTERM", false, 143, 15, 0, at(0), 0, "interrupted", 0, "stopped by SIGTERM"},

		// The child died first, of the same stop.
		{"SIGTERM 1.9 s before the holder's", false, 143, 15, 0, at(1900 * time.Millisecond), 2 * s, "interrupted", 0, "its process had died of SIGTERM 1.9 s before"},
		{"SIGKILL 2 s before the holder's", false, 137, 9, 0, at(2 * s), 2 * s, "interrupted", 0, "SIGKILL 2.0 s before"},
		{"SIGHUP just before", false, 129, 1, 0, at(time.Millisecond), s, "interrupted", 0, "SIGHUP 0.0 s before"},
		{"status 143 from a wrapper shell, before", false, 143, 0, 0, at(s), s, "interrupted", 0, "SIGTERM 1.0 s before"},
		{"SIGTERM 2.1 s before the holder's", false, 143, 15, 0, at(2100 * time.Millisecond), 3 * s, "exited", 0, ""},
		{"exit 0 just before SIGTERM", false, 0, 0, 0, at(s / 10), s, "exited", 0, ""},
		{"exit 1 just before SIGTERM", false, 1, 0, 0, at(s / 10), s, "exited", 0, ""},
		{"SIGINT (Ctrl-C) just before SIGTERM", false, 130, 2, 0, at(s / 10), s, "exited", 0, ""},
		{"SIGSEGV just before SIGTERM", false, 139, 11, 0, at(s / 10), s, "exited", 0, ""},
		{"exit 255 just before SIGTERM", false, 255, 0, 0, at(s / 10), s, "exited", 0, ""},

		// No SIGTERM (yet): a stop's signal waits out the window.
		{"SIGTERM, no holder's SIGTERM yet", false, 143, 15, 0, none, s / 2, "", 1500 * time.Millisecond, ""},
		{"SIGKILL, the window just open", false, 137, 9, 0, none, 0, "", stopWindow, ""},
		{"SIGHUP, the window over", false, 129, 1, 0, none, 2 * s, "exited", 0, ""},
		{"SIGKILL, judged late", false, 137, 9, 0, none, 10 * s, "exited", 0, ""},
		{"exit 0, no SIGTERM", false, 0, 0, 0, none, 0, "exited", 0, ""},
		{"exit 3, no SIGTERM", false, 3, 0, 0, none, 0, "exited", 0, ""},
		{"SIGINT, no SIGTERM", false, 130, 2, 0, none, 0, "exited", 0, ""},

		// A close on purpose is closed, in every order.
		{"closed on purpose", true, 129, 1, 0, none, 0, "closed", 0, ""},
		{"closed, then SIGTERM", true, 129, 1, s, at(s / 2), s, "closed", 0, ""},
		{"SIGTERM, then closed", true, 129, 1, s, at(0), s, "closed", 0, ""},
		{"closed, and it exited 0 meanwhile", true, 0, 0, 0, none, 0, "closed", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := endFacts{closing: tc.closing, stopAt: tc.stopAt, died: at(tc.died), code: tc.code, sig: tc.sig}
			state, reason, wait := judgeEnd(f, at(tc.now))
			if state != tc.state || wait != tc.wait || !strings.Contains(reason, tc.reasonHas) || (tc.reasonHas == "") != (reason == "") {
				t.Fatalf("judgeEnd = %q %q wait %v, want %q (reason with %q) wait %v", state, reason, wait, tc.state, tc.reasonHas, tc.wait)
			}
		})
	}
}

// A server that connects as the session ends is told the end, never
// reset: every connection the holder's socket took gets its Welcome and
// the Exit, however late it queued. One that comes later finds no socket.
// Servers connect all the time here, but say hello one at a time: a
// hello makes its connection the live one and closes the one before.
func TestConnectAsTheSessionEnds(t *testing.T) {
	for range 5 {
		th := startHolder(t, "printf bye; exit 3", 0)
		sock := filepath.Join(th.dir, sessiondir.SocketFile)
		var wg sync.WaitGroup
		var one sync.Mutex
		errs := make(chan error, 64)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; ; n++ {
					c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
					if err != nil {
						return // the holder is gone
					}
					one.Lock()
					err = toTheExit(c)
					one.Unlock()
					c.Close()
					if err != nil {
						errs <- fmt.Errorf("connection %d: %w", n, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if _, err := th.endedMeta(); err != nil {
			t.Fatal(err)
		}
	}
}

// toTheExit says hello on c and reads to the Exit frame, which must
// record the child's exit 3.
func toTheExit(c *net.UnixConn) error {
	c.SetDeadline(time.Now().Add(wait))
	if err := wire.NewWriter(c).JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: "server"}); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	r := bufio.NewReader(c)
	var buf []byte
	for {
		f, err := wire.ReadFrame(r, &buf)
		if err != nil {
			return fmt.Errorf("read before the Exit: %w", err)
		}
		if f.Type == wire.TypeError {
			return fmt.Errorf("error frame %q", f.Payload)
		}
		if f.Type == wire.TypeExit {
			var e wire.Exit
			if err := wire.ParseJSON(f.Payload, &e); err != nil || e.ExitCode == nil || *e.ExitCode != 3 {
				return fmt.Errorf("exit %s (%v), want exit 3", f.Payload, err)
			}
			return nil
		}
	}
}

// The Exit frame follows the sync of the ended session's log, which
// waits for the removal of the segments retention dropped: a server told
// the end (termkeep wait --exit) then reads the log as it stays, and two
// exports of the ended session agree. The sync is held here while the
// forwarder is woken: an end already published would be sent then.
func TestExitAfterLogSync(t *testing.T) {
	var hp atomic.Pointer[holder]
	gotExit := make(chan struct{})
	early := make(chan bool, 1)
	sync0 := syncEnded
	t.Cleanup(func() { syncEnded = sync0 })
	syncEnded = func(l *outlog.Log) error {
		if h := hp.Load(); h != nil {
			h.poke()
		}
		select {
		case <-gotExit:
			early <- true
		case <-time.After(time.Second):
			early <- false
		}
		return sync0(l)
	}
	th := startHolder(t, "read -r go; printf bye; exit 3", 0)
	hp.Store(th.h)
	s, _ := th.connect(0)
	s.w.Input([]byte("\n"))
	for {
		f := s.next()
		if f.Type == wire.TypeExit {
			close(gotExit)
			break
		}
	}
	if <-early {
		t.Fatal("the Exit frame was sent before the log was synced")
	}
	if _, err := th.endedMeta(); err != nil {
		t.Fatal(err)
	}
}
