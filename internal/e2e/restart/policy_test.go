package restart

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// The session policies' deadlines below are short; every wait on them is
// generous, and no test asserts how soon a session ended.

// waitPolicyEnd waits up to within for ref to end (`termkeep wait --exit`,
// itself a waiter, which must not keep the session alive) and checks it
// ended the way a policy ends it: closed, with a reason naming the policy's
// variable, a session.closed event saying the same, and its log kept.
func waitPolicyEnd(t *testing.T, e *e2e.Env, ref string, within time.Duration, variable string) api.Session {
	t.Helper()
	if _, errs, code := e.Tk("wait", ref, "--exit", "--timeout", within.String()); code == 124 {
		t.Fatalf("session %s still runs %s later (want it ended by %s): %s", ref, within, variable, errs)
	}
	// The waiter hears of the end as the registry records it: give the
	// registry a moment.
	var s api.Session
	e2e.WaitFor(t, 5*time.Second, "the registry to record the end of "+ref, func() bool {
		s = e.Session(ref)
		return s.State != string(store.StateRunning)
	})
	if s.State != string(store.StateClosed) || !strings.Contains(s.Reason, variable) {
		t.Fatalf("session %s is %s, reason %q; want closed with a reason naming %s", ref, s.State, s.Reason, variable)
	}
	// ls shows the same.
	for _, l := range e.Ls() {
		if l.ID == s.ID && (l.State != s.State || l.Reason != s.Reason) {
			t.Fatalf("ls shows %s as %s (%q), get as %s (%q)", ref, l.State, l.Reason, s.State, s.Reason)
		}
	}
	_, events := e.SessionEvents(s.ID)
	if !slices.ContainsFunc(events, func(ev api.Event) bool {
		return ev.Kind == store.EventSessionClosed && strings.Contains(string(ev.Detail), variable)
	}) {
		t.Fatalf("no session.closed event naming %s among %s's events: %+v", variable, ref, events)
	}
	if st, err := os.Stat(filepath.Join(e.Dir, "sessions", s.ID, sessiondir.LogDir)); err != nil || !st.IsDir() {
		t.Fatalf("the log directory of %s is gone after the policy ended it: %v", ref, err)
	}
	return s
}

func mustRun(t *testing.T, e *e2e.Env, ref string) {
	t.Helper()
	if s := e.Session(ref); s.State != string(store.StateRunning) {
		t.Fatalf("session %s is %s (%s), want running", ref, s.State, s.Reason)
	}
}

// A session no viewer ever attached to ends after the orphan grace.
func TestOrphanGraceEndsSessionWithNoViewer(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.ServerEnv = []string{"TERMKEEP_ORPHAN_GRACE=2s"}
	e.StartServer()
	e.MustTk("new", "--name", "lone", "--", "sleep", "600")
	waitPolicyEnd(t, e, "lone", 20*time.Second, "TERMKEEP_ORPHAN_GRACE")
}

// An attached viewer keeps a session past the orphan grace; once it
// leaves, the grace starts again and the session ends.
func TestOrphanGraceWaitsForViewer(t *testing.T) {
	e2e.SkipShort(t)
	const grace = 2 * time.Second
	e := e2e.NewEnv(t)
	e.ServerEnv = []string{"TERMKEEP_ORPHAN_GRACE=" + grace.String()}
	e.StartServer()
	e.MustTk("new", "--name", "kept", "--", "sleep", "600")
	v := e2e.OpenViewer(t, e, "kept", wire.Hello{From: wire.FromSnapshot, Cols: 80, Rows: 24})
	mustRun(t, e, "kept") // the viewer came within the grace
	time.Sleep(grace + 3*time.Second)
	mustRun(t, e, "kept")
	v.S.Close()
	waitPolicyEnd(t, e, "kept", grace+5*time.Second, "TERMKEEP_ORPHAN_GRACE")
}

// A session that prints something every 500 ms outlives the idle timeout;
// a quiet one does not.
func TestIdleTimeoutEndsQuietSession(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.ServerEnv = []string{"TERMKEEP_IDLE_TIMEOUT=2s"}
	e.StartServer()
	start := time.Now()
	e.MustTk("new", "--name", "busy", "--", "sh", "-c", "while :; do echo tick; sleep 0.5; done")
	e.MustTk("new", "--name", "quiet", "--", "sleep", "600")
	waitPolicyEnd(t, e, "quiet", 20*time.Second, "TERMKEEP_IDLE_TIMEOUT")
	time.Sleep(time.Until(start.Add(5 * time.Second)))
	mustRun(t, e, "busy")
}

// A policy value the server cannot read stops it at once with a message
// naming the variable or the flag.
func TestPolicyBadValueIsStartupError(t *testing.T) {
	e := e2e.NewEnv(t)
	for _, tc := range []struct {
		env, flag []string
		want      string
	}{
		{[]string{"TERMKEEP_ORPHAN_GRACE=soon"}, nil, "TERMKEEP_ORPHAN_GRACE"},
		{[]string{"TERMKEEP_IDLE_TIMEOUT=-1h"}, nil, "TERMKEEP_IDLE_TIMEOUT"},
		{nil, []string{"--idle-timeout", "10 minutes"}, "--idle-timeout"},
	} {
		// A server that took the value would serve until killed.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, e2e.TkBin, append([]string{"serve", "--state-dir", e.Dir, "--listen", "off"}, tc.flag...)...)
		cmd.Env = append(os.Environ(), tc.env...)
		out, err := cmd.CombinedOutput()
		cancel()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("serve with %v %v: %v, %q; want exit 2 naming %s", tc.env, tc.flag, err, out, tc.want)
		}
	}
}
