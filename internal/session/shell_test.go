package session

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/shellmark"
)

const (
	markA = "\x1b]133;A\x07"
	markB = "\x1b]133;B\x07"
	markC = "\x1b]133;C\x07"
)

// A holder resends what the host had after a reconnect, or jumps past a
// gap: the tracker takes each byte once, and forgets a mark cut by a jump.
func TestShellFeed(t *testing.T) {
	now := time.Unix(100, 0)
	for _, tc := range []struct {
		name   string
		chunks []shellChunk
		want   string
	}{
		{"in order", chunks(0, markA+"$ "+markB+"ls\r\n", markC+"out\r\n"), "running ls"},
		{"a whole resend", []shellChunk{{0, markA + "$ " + markB + "ls\r\n"}, {22, markC}, {0, markA + "$ " + markB + "ls\r\n" + markC}, {22, markC}}, "running ls #1"},
		{"a resend overlapping new bytes", []shellChunk{{0, markA + "$ " + markB + "ls\r\n"}, {18, "ls\r\n" + markC}}, "running ls #1"},
		{"a gap cuts a mark", []shellChunk{{0, markA + "$ " + markB + "ls\r\n\x1b]133;"}, {1000, "C\x07"}}, "prompt"},
	} {
		var s shellState
		for _, c := range tc.chunks {
			s.feed(c.off, now, []byte(c.p))
		}
		st := s.t.Status()
		got := string(st.State)
		if st.Running != nil {
			got += " " + st.Running.Line
			if strings.HasSuffix(tc.want, "#1") {
				got += " #" + string(rune('0'+st.Running.Seq))
			}
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// shellChunk is output as the holder sends it: at an offset.
type shellChunk struct {
	off uint64
	p   string
}

// chunks is ps sent one after the other from off.
func chunks(off uint64, ps ...string) []shellChunk {
	var out []shellChunk
	for _, p := range ps {
		out = append(out, shellChunk{off, p})
		off += uint64(len(p))
	}
	return out
}

// A new server's host rebuilds the tracker from the log's tail, with the
// times the bytes were logged; a command that printed more than the first
// window since its start is found in the wider one.
func TestShellLoadFromLog(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after int // bytes printed by the running command
		want  shellmark.State
	}{
		{"a short command", 10, shellmark.Running},
		{"past the first window", 300 << 10, shellmark.Running},
		{"past every window", 5 << 20, shellmark.Unknown},
	} {
		logged := time.Unix(7000, 0)
		l, err := outlog.Open(filepath.Join(t.TempDir(), "log"), outlog.Options{Now: func() time.Time { return logged }})
		if err != nil {
			t.Fatal(err)
		}
		l.Append([]byte(markA + "$ " + markB + "false\r\n" + markC + "\x1b]133;D;1\x07" + markA + "$ " + markB + "make\r\n" + markC))
		line := []byte(strings.Repeat("x", 1023) + "\n")
		for n := 0; n < tc.after; n += len(line) {
			l.Append(line)
		}
		done := l.End()
		l.Append([]byte("\x1b]133;D;2\x07" + markA + "$ " + markB))
		var s shellState
		s.load(l, done)
		st := s.t.Status()
		if st.State != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, st.State, tc.want)
		} else if tc.want == shellmark.Running && (st.Running.Line != "make" || !st.Running.Start.Equal(logged) || st.Last == nil || *st.Last.Status != 1) {
			t.Errorf("%s: %+v %+v %+v", tc.name, st, st.Running, st.Last)
		}
		// Live output goes on from the log's end: the command ends, and
		// the shell's prompt hooks run until its prompt.
		s.feed(done, logged, []byte("\x1b]133;D;0\x07"))
		if tc.want == shellmark.Running {
			if st := s.t.Status(); st.State != shellmark.Returning || st.Last.Line != "make" || *st.Last.Status != 0 {
				t.Errorf("%s: after D: %+v", tc.name, st)
			}
		}
		// The whole log: the command ended; its start is found in the
		// wider window when its output fills the first one.
		var ended shellState
		ended.load(l, l.End())
		if st := ended.t.Status(); tc.want == shellmark.Running && (st.State != shellmark.AtPrompt || st.Last == nil || st.Last.Line != "make" ||
			!st.Last.HasOutput || *st.Last.Status != 2 || st.Last.End != done) {
			t.Errorf("%s: ended: %+v %+v", tc.name, st, st.Last)
		}
		l.Close()
	}
}
