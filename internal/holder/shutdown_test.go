package holder

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// prepared sends a shutdown frame (on) and reads until the holder answers
// it, returning the answer's byte.
func (s *server) prepared(st *stream, on bool) bool {
	s.t.Helper()
	if err := s.w.Shutdown(wire.TypeShutdown, on); err != nil {
		s.t.Fatal(err)
	}
	for {
		f := s.next()
		switch f.Type {
		case wire.TypePrepared:
			v, _ := wire.ParseShutdown(f.Payload)
			return v
		case wire.TypeOutput:
			_, data, _ := wire.ParseOutput(f.Payload)
			st.data = append(st.data, data...)
		case wire.TypeExit:
			s.t.Fatalf("the session ended (%s) before the holder answered the shutdown frame", f.Payload)
		}
	}
}

// Told the machine is shutting down, a holder records it in meta.json
// before it answers; the SIGTERM that follows ends the session
// interrupted with the cause "shutdown". A cancelled shutdown clears the
// mark: a later SIGTERM is an ordinary stop.
func TestShutdownFrame(t *testing.T) {
	const hup = `trap 'printf hup; exit 129' HUP; printf ready; while :; do sleep 0.05; done`
	for _, tc := range []struct {
		name   string
		frames []bool // the shutdown frames sent, in order
		cause  string
		reason string
	}{
		{"a shutdown", []bool{true}, wire.CauseShutdown, "the machine shutting down"},
		{"announced twice", []bool{true, true}, wire.CauseShutdown, "the machine shutting down"},
		{"cancelled", []bool{true, false}, wire.CauseStopped, "the machine or service stopping"},
		{"cancelled with none announced", []bool{false}, wire.CauseStopped, "the machine or service stopping"},
		{"cancelled, then announced again", []bool{true, false, true}, wire.CauseShutdown, "the machine shutting down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, th, s, st := spawnHolder(t, hup)
			for _, on := range tc.frames {
				if got := s.prepared(st, on); got != on {
					t.Fatalf("answered %v to a shutdown frame of %v", got, on)
				}
				m, err := sessiondir.ReadMeta(th.dir)
				if err != nil {
					t.Fatal(err)
				}
				if (m.ShutdownAt != nil) != on || m.EndedAt != nil {
					t.Fatalf("after a shutdown frame of %v meta.json has shutdown_at %v, ended %v", on, m.ShutdownAt, m.EndedAt)
				}
			}
			syscall.Kill(p.HolderPid, syscall.SIGTERM)
			s.readTo(st, 1<<62)
			if st.exit == nil || st.exit.State != "interrupted" || st.exit.Cause != tc.cause || !strings.Contains(st.exit.Reason, tc.reason) {
				t.Fatalf("exit %+v, want interrupted, cause %s, a reason saying %q", st.exit, tc.cause, tc.reason)
			}
			if !strings.HasSuffix(string(st.data), "hup") {
				t.Fatalf("the child printed %q, want its SIGHUP trap's hup", st.data)
			}
			m, err := th.endedMeta()
			if err != nil || m.State() != "interrupted" || m.Reason != st.exit.Reason {
				t.Fatalf("meta.json %+v (%v), want the Exit frame's end %+v", m, err, st.exit)
			}
		})
	}
}

// After a shutdown frame the same ends are judged as without one; an
// interrupted one says the machine was shutting down, and its Exit
// frame's cause is the shutdown's.
func TestJudgeEndShutdown(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const s = time.Second
	for _, tc := range []struct {
		name      string
		f         endFacts
		now       time.Duration
		state     string
		reasonHas string
	}{
		{"hung up after SIGTERM", endFacts{stopAt: t0, died: t0.Add(s), code: 129, sig: 1, shutdown: true}, s, "interrupted", shutdownReason},
		{"died of SIGTERM just before the holder's", endFacts{stopAt: t0.Add(s), died: t0, code: 143, sig: 15, shutdown: true}, s, "interrupted", shutdownReason + " (its process had died of SIGTERM 1.0 s before)"},
		{"exit 0 as the machine stops", endFacts{stopAt: t0, died: t0, shutdown: true}, 0, "exited", ""},
		{"its own exit 1 before any SIGTERM", endFacts{died: t0, code: 1, shutdown: true}, 0, "exited", ""},
		{"closed on purpose", endFacts{closing: true, stopAt: t0, died: t0, code: 129, sig: 1, shutdown: true}, 0, "closed", ""},
		{"no shutdown frame", endFacts{stopAt: t0, died: t0.Add(s), code: 129, sig: 1}, s, "interrupted", stopReason},
	} {
		state, reason, wait := judgeEnd(tc.f, t0.Add(tc.now))
		if state != tc.state || wait != 0 || !strings.Contains(reason, tc.reasonHas) {
			t.Errorf("%s: %s %q (wait %s), want %s saying %q", tc.name, state, reason, wait, tc.state, tc.reasonHas)
		}
	}
	at := t0
	for _, tc := range []struct {
		meta  sessiondir.Meta
		state string
		cause string
	}{
		{sessiondir.Meta{ShutdownAt: &at}, "interrupted", wire.CauseShutdown},
		{sessiondir.Meta{}, "interrupted", wire.CauseStopped},
		{sessiondir.Meta{ShutdownAt: &at}, "exited", ""},
	} {
		_, e := ended(tc.meta, tc.state, "", 129, 1, 0, t0)
		if e.Cause != tc.cause {
			t.Errorf("ended %s with shutdown_at %v: cause %q, want %q", tc.state, tc.meta.ShutdownAt, e.Cause, tc.cause)
		}
	}
}
