package holder

import (
	"fmt"
	"testing"
	"time"

	"termkeep/internal/sessiondir"
)

// How a session ends, through a real holder: the connected server gets the
// last byte, then the Exit frame, and meta.json records the same end.
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
			th := startHolder(t, tc.script, 0)
			s, _ := th.connect(0)
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
			select {
			case <-th.done:
			case <-time.After(wait):
				t.Fatalf("the holder still runs %v after the Exit frame", wait)
			}
			m, err := sessiondir.ReadMeta(th.dir)
			if err != nil || m.EndedAt == nil || *m.ExitCode != tc.code || m.Signal != tc.sig || m.Closed != tc.close || m.End != st.end() {
				t.Fatalf("meta.json %+v, %v; want the same end as the Exit frame", m, err)
			}
		})
	}
}

// ended's table: only a close on purpose is "closed".
func TestEnded(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))
	for _, tc := range []struct {
		closing   bool
		code, sig int
		want      string
	}{
		{false, 0, 0, "exited 0/0"},
		{false, 130, 2, "exited 130/2"},
		{true, 129, 1, "closed 129/1"},
		{true, 0, 0, "closed 0/0"}, // closed, and the child exited by itself meanwhile
	} {
		m, e := ended(sessiondir.Meta{ID: "s", Cols: 80}, tc.closing, tc.code, tc.sig, 42, now)
		if got := fmt.Sprintf("%s %d/%d", e.State, *e.ExitCode, e.Signal); got != tc.want || e.End != 42 {
			t.Errorf("exit %s at %d, want %s at 42", got, e.End, tc.want)
		}
		if m.ID != "s" || m.Cols != 80 || !m.EndedAt.Equal(now) || m.EndedAt.Location() != time.UTC ||
			*m.ExitCode != tc.code || m.Signal != tc.sig || m.Closed != tc.closing || m.End != 42 {
			t.Errorf("meta %+v", m)
		}
	}
}

// drainOver's table: the drain stops at the first quiet look, or after
// drainMax however busy the pty.
func TestDrainOver(t *testing.T) {
	for _, tc := range []struct {
		since     time.Duration
		last, end uint64
		want      bool
	}{
		{drainLook, 10, 10, true},  // quiet at the first look
		{drainLook, 10, 20, false}, // still writing
		{drainMax - time.Nanosecond, 0, 1 << 30, false},
		{drainMax, 0, 1 << 30, true}, // a writer that never stops
		{10 * drainMax, 5, 6, true},  // a look that came late
		{0, 0, 0, true},
	} {
		if got := drainOver(tc.since, tc.last, tc.end); got != tc.want {
			t.Errorf("drainOver(%v, %d, %d) = %v, want %v", tc.since, tc.last, tc.end, got, tc.want)
		}
	}
}
