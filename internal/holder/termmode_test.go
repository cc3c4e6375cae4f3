package holder

import (
	"bytes"
	"testing"
	"time"

	"github.com/creack/pty"

	"termkeep/internal/wire"
)

// startShell starts an interactive bash without line editing, so that at
// its prompt the pty's line discipline edits and echoes what is typed.
func startShell(t *testing.T) *testHolder {
	t.Helper()
	return startHolder(t, "stty sane; PS1='$ ' exec bash --noprofile --norc --noediting -i", 0)
}

// awaitMode reads the stream until a term-mode frame with the given flags
// arrives, and returns it; the output on the way is kept in st.
func (s *server) awaitMode(st *stream, echo, canonical bool) wire.TermMode {
	s.t.Helper()
	for {
		f := s.next()
		switch f.Type {
		case wire.TypeOutput:
			_, data, _ := wire.ParseOutput(f.Payload)
			st.data = append(st.data, data...)
		case wire.TypeTermMode:
			m, err := wire.ParseTermMode(f.Payload)
			if err != nil {
				s.t.Fatal(err)
			}
			st.modes = append(st.modes, m)
			if m.Echo == echo && m.Canonical == canonical {
				return m
			}
		}
	}
}

// The holder reports the pty's ECHO and ICANON flags at connect and each
// time a program changes them: stty, a password read, back again, and a
// shell that edits its own line (readline turns both off at its prompt).
func TestTermModeReported(t *testing.T) {
	th := startShell(t)
	s, _ := th.connect(0)
	st := &stream{}
	s.awaitMode(st, true, true)
	steps := []struct {
		typed           string
		echo, canonical bool
	}{
		{"stty -echo\n", false, true},
		{"stty echo\n", true, true},
		{"read -s x\n", false, true},
		{"secret\n", true, true},
		{"exec bash --noprofile --norc -i\n", false, false},
	}
	for _, step := range steps {
		s.w.Input([]byte(step.typed))
		m := s.awaitMode(st, step.echo, step.canonical)
		if m.At > th.h.out.End() {
			t.Fatalf("after %q: mode at %d, past the log's end %d", step.typed, m.At, th.h.out.End())
		}
	}
	// Each change is reported once, not at every look.
	for i := 1; i < len(st.modes); i++ {
		if st.modes[i].Echo == st.modes[i-1].Echo && st.modes[i].Canonical == st.modes[i-1].Canonical {
			t.Errorf("mode %+v reported twice in a row: %+v", st.modes[i], st.modes)
		}
	}
	if bytes.Contains(st.data, []byte("secret")) {
		t.Errorf("the password read echoed: %q", st.data)
	}
}

// A server of an older version is never sent the frame.
func TestTermModeOlderServer(t *testing.T) {
	th := startShell(t)
	s := th.dial()
	s.w.JSON(wire.TypeHello, wire.Hello{Version: 6, Role: "server", From: 0})
	if f := s.next(); f.Type != wire.TypeWelcome {
		t.Fatalf("got %s, want welcome", f.Type)
	}
	st := &stream{}
	s.w.Input([]byte("stty -echo; sleep 0.1; stty echo; sleep 0.1; echo d''one\n"))
	for !bytes.Contains(st.data, []byte("done")) {
		s.readTo(st, st.end()+1)
	}
	if len(st.modes) != 0 {
		t.Fatalf("a version 6 server was sent term-mode frames: %+v", st.modes)
	}
}

// recheckAfter spaces the looks at the pty's mode after output: soon, in
// case the program changes it just after it printed (a password prompt),
// then less and less often, down to the forwarder's idle second.
func TestRecheckAfter(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct{ since, want time.Duration }{
		{0, 5 * ms},
		{-time.Hour, 5 * ms}, // a clock that stepped back: look soon
		{3 * ms, 2 * ms},
		{5 * ms, 15 * ms},
		{19 * ms, 1 * ms},
		{60 * ms, 40 * ms},
		{499 * ms, 1 * ms},
		{500 * ms, 500 * ms},
		{time.Second, time.Second},
		{time.Hour, time.Second},
	} {
		if got := recheckAfter(tc.since); got != tc.want {
			t.Errorf("recheckAfter(%v) = %v, want %v", tc.since, got, tc.want)
		}
	}
	// Whatever the time since, the next look is at most a second away and
	// never now (a busy loop).
	for d := -time.Second; d < 3*time.Second; d += 7 * ms {
		if got := recheckAfter(d); got <= 0 || got > time.Second {
			t.Fatalf("recheckAfter(%v) = %v", d, got)
		}
	}
}

// BenchmarkReadTermMode is the cost of one look at the pty's mode, which
// the forwarder pays each time it catches up with the output; compare
// BenchmarkPtyWriteRead, a byte through the pty and back.
func BenchmarkReadTermMode(b *testing.B) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		b.Skip(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	rc, err := ptmx.SyscallConn()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := readTermMode(rc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPtyWriteRead writes a byte to a pty's terminal side and reads
// it from the master: the least a chunk of output costs the holder.
func BenchmarkPtyWriteRead(b *testing.B) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		b.Skip(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	buf := make([]byte, 64)
	for b.Loop() {
		if _, err := tty.Write([]byte{'x'}); err != nil {
			b.Fatal(err)
		}
		if _, err := ptmx.Read(buf); err != nil {
			b.Fatal(err)
		}
	}
}
