package holder

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// These tests run a real holder (start and serve, as Main does) in the test
// process: a real pty and bash, the log in a temporary directory, and a
// server played by the test over holder.sock.

// wait is how long a test waits for anything: generous, because the machine
// may be busy; a test that passes never waits this long.
const wait = 60 * time.Second

type testHolder struct {
	t    *testing.T
	h    *holder
	dir  string
	done chan struct{} // closed when serve has returned
}

// startHolder starts a holder running script under bash in a pty whose
// terminal is made raw first (so that the log holds exactly what the script
// writes), with retention bytes of log (0: the default).
func startHolder(t *testing.T, script string, retention int64) *testHolder {
	t.Helper()
	// A short directory: a unix socket's path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "tkh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	h, err := start(Spec{
		ID: "t1", Dir: dir, Cols: 80, Rows: 24, LogRetention: retention, LogSync: "never",
		Command: []string{"bash", "--noprofile", "--norc", "-c", "stty raw -echo; " + script},
		Env:     []string{"PATH=" + os.Getenv("PATH"), "TERM=dumb", "LC_ALL=C"},
		Cwd:     dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	th := &testHolder{t: t, h: h, dir: dir, done: make(chan struct{})}
	go func() { h.serve(); close(th.done) }()
	t.Cleanup(func() {
		h.close(0)
		select {
		case <-th.done:
		case <-time.After(wait):
			t.Errorf("the holder did not end within %v of a close", wait)
		}
	})
	return th
}

// waitEnd waits until the log holds at least n bytes.
func (th *testHolder) waitEnd(n uint64) {
	th.t.Helper()
	deadline := time.Now().Add(wait)
	for th.h.out.End() < n {
		if time.Now().After(deadline) {
			th.t.Fatalf("the log holds %d bytes after %v, want %d", th.h.out.End(), wait, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logged returns the log's bytes in [from, to).
func (th *testHolder) logged(from, to uint64) []byte {
	th.t.Helper()
	cur := th.h.out.Cursor(from)
	defer cur.Close()
	var out []byte
	buf := make([]byte, 64<<10)
	for uint64(len(out)) < to-from {
		n, err := cur.Read(buf[:min(uint64(len(buf)), to-from-uint64(len(out)))])
		out = append(out, buf[:n]...)
		if n == 0 && err != nil {
			th.t.Fatalf("read the log at %d: %v", from+uint64(len(out)), err)
		}
	}
	return out
}

// server is the test's side of a holder connection.
type server struct {
	t   *testing.T
	c   *net.UnixConn
	r   *bufio.Reader
	w   *wire.Writer
	buf []byte
}

func (th *testHolder) dial() *server {
	th.t.Helper()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: filepath.Join(th.dir, sessiondir.SocketFile), Net: "unix"})
	if err != nil {
		th.t.Fatal(err)
	}
	th.t.Cleanup(func() { c.Close() })
	return &server{t: th.t, c: c, r: bufio.NewReader(c), w: wire.NewWriter(c)}
}

// connect dials and says hello from offset from; it returns the Welcome.
func (th *testHolder) connect(from int64) (*server, wire.Welcome) {
	th.t.Helper()
	s := th.dial()
	if err := s.w.JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: "server", From: from}); err != nil {
		th.t.Fatal(err)
	}
	f := s.next()
	if f.Type != wire.TypeWelcome {
		th.t.Fatalf("got a %s frame (%q), want a welcome", f.Type, f.Payload)
	}
	var wel wire.Welcome
	if err := wire.ParseJSON(f.Payload, &wel); err != nil {
		th.t.Fatal(err)
	}
	return s, wel
}

// next reads a frame, failing the test after wait or on a read error.
func (s *server) next() wire.Frame {
	s.t.Helper()
	f, err := s.read()
	if err != nil {
		s.t.Fatalf("read a frame: %v", err)
	}
	return f
}

func (s *server) read() (wire.Frame, error) {
	s.c.SetReadDeadline(time.Now().Add(wait))
	f, err := wire.ReadFrame(s.r, &s.buf)
	if err != nil {
		return f, err
	}
	if err := wire.Validate(f); err != nil {
		s.t.Fatalf("the holder sent a %s frame that does not validate: %v", f.Type, err)
	}
	return f, nil
}

// stream is what a server received: output bytes from an offset, and the
// other frames in order, as a trace.
type stream struct {
	from  uint64
	data  []byte
	trace []string
	exit  *wire.Exit
}

func (st *stream) end() uint64 { return st.from + uint64(len(st.data)) }

// readTo reads until the output reaches offset to (or an Exit frame
// arrives), checking that every Output frame starts where the last one
// ended: no byte twice, none missing.
func (s *server) readTo(st *stream, to uint64) {
	s.t.Helper()
	for st.end() < to && st.exit == nil {
		f := s.next()
		switch f.Type {
		case wire.TypeOutput:
			off, data, _ := wire.ParseOutput(f.Payload)
			if off != st.end() {
				s.t.Fatalf("output at %d, want %d (trace %v)", off, st.end(), st.trace)
			}
			st.data = append(st.data, data...)
		case wire.TypeGap:
			from, to, _ := wire.ParseGap(f.Payload)
			st.trace = append(st.trace, fmt.Sprintf("gap %d-%d", from, to))
			if from != st.end() {
				s.t.Fatalf("gap from %d, want %d", from, st.end())
			}
			// What follows a gap starts at its end.
			st.from, st.data = to, nil
		case wire.TypeResized:
			off, cols, rows, _ := wire.ParseResized(f.Payload)
			st.trace = append(st.trace, fmt.Sprintf("resized %dx%d at +%d", cols, rows, off-st.from))
		case wire.TypeExit:
			st.exit = new(wire.Exit)
			wire.ParseJSON(f.Payload, st.exit)
			st.trace = append(st.trace, "exit "+st.exit.State)
		case wire.TypeError:
			code, msg, _ := wire.ParseError(f.Payload)
			s.t.Fatalf("error frame %d: %s", code, msg)
		default:
			st.trace = append(st.trace, f.Type.String())
		}
	}
}

// expectError reads until an Error frame (skipping output that was on its
// way) and then the end of the connection; it returns the Error's code and
// message. wantErr false expects the end with no Error frame.
func (s *server) expectError(wantErr bool) (uint16, string) {
	s.t.Helper()
	var code uint16
	var msg string
	got := false
	for {
		f, err := s.read()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				s.t.Fatalf("the holder kept the connection open for %v after a bad frame", wait)
			}
			break // closed: what a bad frame must lead to
		}
		if f.Type == wire.TypeError {
			if got {
				s.t.Fatal("two error frames")
			}
			code, msg, _ = wire.ParseError(f.Payload)
			got = true
		}
	}
	if got != wantErr {
		s.t.Fatalf("error frame: got %v (%d %q), want %v", got, code, msg, wantErr)
	}
	return code, msg
}

// b64len is how many bytes base64 -w0 writes for n bytes.
func b64len(n int) uint64 { return uint64((n + 2) / 3 * 4) }

// The server connects from the start, from the middle, from the end, and
// (for live output only) from FromEnd: it gets exactly the log's bytes from
// there, then the Exit frame.
func TestForwardResume(t *testing.T) {
	const n = 300_000
	total := b64len(n)
	for _, tc := range []struct {
		name string
		from int64
		want uint64 // where the stream starts
	}{
		{"start", 0, 0},
		{"middle", int64(total / 3), total / 3},
		{"one before the end", int64(total - 1), total - 1},
		{"end", int64(total), total},
		{"live only", wire.FromEnd, total},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := startHolder(t, fmt.Sprintf("head -c %d /dev/urandom | base64 -w0; read x", n), 0)
			th.waitEnd(total)
			s, wel := th.connect(tc.from)
			if wel.First != 0 || wel.End != total || wel.Start != tc.want || wel.Cols != 80 || wel.Rows != 24 || wel.Exited {
				t.Fatalf("welcome %+v, want first 0, end %d, start %d, 80x24, running", wel, total, tc.want)
			}
			st := &stream{from: tc.want}
			s.readTo(st, total)
			if !bytes.Equal(st.data, th.logged(tc.want, total)) {
				t.Fatal("the bytes received differ from the log's")
			}
			s.w.Input([]byte("\n")) // the script ends
			s.readTo(st, total+1)
			if st.exit == nil || st.exit.State != "exited" || st.exit.End != total || *st.exit.ExitCode != 0 {
				t.Fatalf("stream ended with %+v, want exit 0 at %d (trace %v)", st.exit, total, st.trace)
			}
			if len(st.trace) != 1 {
				t.Fatalf("trace %v, want only the exit", st.trace)
			}
		})
	}
}

// A server that asks for bytes retention has deleted is told of the gap,
// then gets everything from the oldest byte kept.
func TestForwardTrimmed(t *testing.T) {
	const n = 600_000
	total := b64len(n)
	th := startHolder(t, fmt.Sprintf("head -c %d /dev/urandom | base64 -w0; read x", n), 64<<10)
	th.waitEnd(total)
	first := th.h.out.First()
	if first == 0 {
		t.Fatal("retention kept the whole log; the test needs it trimmed")
	}
	for _, from := range []int64{0, int64(first) - 1} {
		s, wel := th.connect(from)
		if wel.First != first || wel.Start != first {
			t.Fatalf("from %d: welcome %+v, want first and start %d", from, wel, first)
		}
		st := &stream{from: uint64(from)}
		s.readTo(st, total)
		if want := fmt.Sprintf("gap %d-%d", from, first); len(st.trace) != 1 || st.trace[0] != want {
			t.Fatalf("from %d: trace %v, want [%s]", from, st.trace, want)
		}
		if st.from != first || !bytes.Equal(st.data, th.logged(first, total)) {
			t.Fatalf("from %d: the bytes after the gap differ from the log's", from)
		}
	}
}

// A server that asks for an offset the session has not reached yet is
// refused with an error it can act on, and the session is untouched: the
// live connection keeps streaming.
func TestForwardFromTheFuture(t *testing.T) {
	th := startHolder(t, `printf ready; while read -r l; do printf "<%s>" "$l"; done`, 0)
	th.waitEnd(5)
	live, _ := th.connect(0)
	st := &stream{}
	live.readTo(st, 5)

	for _, from := range []int64{6, 1 << 40, 1<<63 - 1} {
		s := th.dial()
		s.w.JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: "server", From: from})
		code, msg := s.expectError(true)
		if code != wire.CodeUnavailable || !strings.Contains(msg, fmt.Sprint(from)) || !strings.Contains(msg, "beyond the end") {
			t.Fatalf("from %d: error %d %q, want unavailable naming the offset and the end", from, code, msg)
		}
	}
	live.w.Input([]byte("still\n"))
	live.readTo(st, 5+len64("<still>"))
	if got := string(st.data); got != "ready<still>" {
		t.Fatalf("the live connection got %q", got)
	}
}

func len64(s string) uint64 { return uint64(len(s)) }

// resumeAt's table, hostile offsets included.
func TestResumeAt(t *testing.T) {
	for _, tc := range []struct {
		want        int64
		first, end  uint64
		from, start uint64
		refused     bool
	}{
		{want: 0, first: 0, end: 0, from: 0, start: 0},
		{want: wire.FromEnd, first: 10, end: 100, from: 100, start: 100},
		{want: wire.FromSnapshot, first: 10, end: 100, from: 100, start: 100}, // a holder has no snapshots: live
		{want: -1 << 63, first: 0, end: 5, from: 5, start: 5},
		{want: 0, first: 10, end: 100, from: 0, start: 10},   // trimmed: a gap, then from first
		{want: 9, first: 10, end: 100, from: 9, start: 10},   // one byte trimmed
		{want: 10, first: 10, end: 100, from: 10, start: 10}, // the oldest byte kept
		{want: 50, first: 10, end: 100, from: 50, start: 50},
		{want: 100, first: 10, end: 100, from: 100, start: 100},
		{want: 101, first: 10, end: 100, refused: true}, // one byte from the future
		{want: 1<<63 - 1, first: 10, end: 100, refused: true},
		{want: 1, first: 0, end: 0, refused: true},
	} {
		from, start, err := resumeAt(tc.want, tc.first, tc.end)
		if tc.refused {
			if err == nil || !strings.Contains(err.Error(), fmt.Sprint(tc.want)) {
				t.Errorf("resumeAt(%d, %d, %d) = %d, %d, %v; want a refusal naming the offset", tc.want, tc.first, tc.end, from, start, err)
			}
			continue
		}
		if err != nil || from != tc.from || start != tc.start {
			t.Errorf("resumeAt(%d, %d, %d) = %d, %d, %v; want %d, %d", tc.want, tc.first, tc.end, from, start, err, tc.from, tc.start)
		}
	}
}
