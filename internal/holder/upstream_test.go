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
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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
	// discard keeps only the count of the output bytes, in skipped.
	discard bool
	skipped uint64
}

func (st *stream) end() uint64 { return st.from + st.skipped + uint64(len(st.data)) }

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
			if st.discard {
				st.skipped += uint64(len(data))
			} else {
				st.data = append(st.data, data...)
			}
		case wire.TypeGap:
			from, to, _ := wire.ParseGap(f.Payload)
			st.trace = append(st.trace, fmt.Sprintf("gap %d-%d", from, to))
			if from != st.end() {
				s.t.Fatalf("gap from %d, want %d", from, st.end())
			}
			// What follows a gap starts at its end.
			st.from, st.data, st.skipped = to, nil, 0
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

// A server that goes away mid-stream and the one that connects after it,
// from where the first got to, have between them every byte exactly once.
func TestForwardReconnectMidStream(t *testing.T) {
	const pieces, piece = 40, 75_000
	total := pieces * b64len(piece)
	th := startHolder(t, fmt.Sprintf("for i in $(seq %d); do head -c %d /dev/urandom | base64 -w0; sleep 0.02; done; read x", pieces, piece), 0)
	var got []byte
	from := int64(0)
	for _, upto := range []uint64{total / 4, total / 2, total} {
		s, wel := th.connect(from)
		if wel.Start != uint64(from) {
			t.Fatalf("welcome %+v, want start %d", wel, from)
		}
		st := &stream{from: uint64(from)}
		s.readTo(st, upto)
		if len(st.trace) != 0 {
			t.Fatalf("trace %v, want output only", st.trace)
		}
		got = append(got, st.data...)
		from = int64(st.end())
		s.c.Close() // mid-frame, as often as not: the holder must not care
	}
	if uint64(len(got)) != total || !bytes.Equal(got, th.logged(0, total)) {
		t.Fatalf("got %d bytes over three connections, want the log's %d exactly", len(got), total)
	}
}

// A server that stops reading holds the pty's reader for at most
// relayStall at a time (relay.go), so the child runs to its end; nothing
// is dropped: once the server reads again it gets every byte.
func TestForwardStalledServer(t *testing.T) {
	const n = 9_000_000 // 12 MB of output: more than relayLagMax behind
	total := b64len(n)
	th := startHolder(t, fmt.Sprintf("head -c %d /dev/urandom | base64 -w0; read x", n), 0)
	s, _ := th.connect(0)
	th.waitEnd(total) // the child was not made to wait for the server
	st := &stream{}
	s.readTo(st, total)
	if len(st.trace) != 0 || !bytes.Equal(st.data, th.logged(0, total)) {
		t.Fatalf("trace %v; the stalled server must get the log's bytes exactly", st.trace)
	}
	s.w.Input([]byte("\n"))
	s.readTo(st, total+1)
	if st.exit == nil || st.exit.End != total {
		t.Fatalf("stream ended with %+v, want exit at %d", st.exit, total)
	}
}

// frame encodes one frame by hand, as a hostile server might.
func frame(t wire.Type, payload []byte) []byte {
	b := []byte{byte(t), 0, 0, 0, 0}
	n := len(payload)
	b[1], b[2], b[3], b[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return append(b, payload...)
}

// A server that sends what a holder cannot take gets an Error frame and
// the connection is closed; a cut connection is just closed. The session
// is untouched: the child runs on, the log has no byte more, and the next
// server is served as if nothing had happened.
func TestServeMalformed(t *testing.T) {
	hello := frame(wire.TypeHello, []byte(fmt.Sprintf(`{"version":%d,"role":"server","from":-1}`, wire.Version)))
	for _, tc := range []struct {
		name  string
		hello bool   // send a good hello first
		send  []byte // then this
		code  uint16 // 0: no error frame, just the end
		msg   string
	}{
		{"input before hello", false, frame(wire.TypeInput, []byte("rm -rf ~\n")), wire.CodeMalformed, "expected a hello"},
		{"hello not JSON", false, frame(wire.TypeHello, []byte("{version")), wire.CodeMalformed, ""},
		{"hello with unknown fields' types", false, frame(wire.TypeHello, []byte(`{"version":"2"}`)), wire.CodeMalformed, ""},
		{"hello version 0", false, frame(wire.TypeHello, []byte(`{"version":0,"from":0}`)), wire.CodeVersion, "too old"},
		{"hello version negative", false, frame(wire.TypeHello, []byte(`{"version":-7,"from":0}`)), wire.CodeVersion, "too old"},
		{"unknown type first", false, frame(0x3f, nil), wire.CodeMalformed, "expected a hello"},
		{"hello cut short", false, hello[:len(hello)-3], wire.CodeMalformed, "expected a hello"},
		{"unknown type", true, frame(0x3f, nil), wire.CodeMalformed, "unknown frame type"},
		{"length past the maximum", true, []byte{byte(wire.TypeInput), 0xff, 0xff, 0xff, 0xff}, wire.CodeMalformed, "larger than"},
		{"resize of 3 bytes", true, frame(wire.TypeResize, []byte{0, 80, 0}), wire.CodeMalformed, "resize"},
		{"resize to 0x0", true, frame(wire.TypeResize, []byte{0, 0, 0, 0}), wire.CodeMalformed, ""},
		{"resize past the maximum", true, frame(wire.TypeResize, []byte{0xff, 0xff, 0xff, 0xff}), wire.CodeMalformed, ""},
		{"signal 0", true, frame(wire.TypeSignal, []byte{0}), wire.CodeMalformed, "signal"},
		{"signal 64", true, frame(wire.TypeSignal, []byte{64}), wire.CodeMalformed, "signal"},
		{"close of 2 bytes", true, frame(wire.TypeClose, []byte{1, 2}), wire.CodeMalformed, "close"},
		{"cwd not UTF-8", true, frame(wire.TypeCwd, []byte{0xff, 0xfe}), wire.CodeMalformed, "UTF-8"},
		{"name too long", true, frame(wire.TypeName, bytes.Repeat([]byte("n"), 257)), wire.CodeMalformed, "name"},
		{"a second hello", true, hello, wire.CodeMalformed, "hello"},
		{"output toward the pty", true, frame(wire.TypeOutput, make([]byte, 9)), wire.CodeMalformed, "output"},
		{"an exit frame", true, frame(wire.TypeExit, []byte(`{"state":"exited"}`)), wire.CodeMalformed, "exit"},
		{"cut mid-frame", true, frame(wire.TypeInput, []byte("echo"))[:7], 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := startHolder(t, `printf ready; while read -r l; do printf "<%s>" "$l"; done`, 0)
			th.waitEnd(5)
			s := th.dial()
			if tc.hello {
				s.c.Write(hello)
				if f := s.next(); f.Type != wire.TypeWelcome {
					t.Fatalf("got %s, want a welcome", f.Type)
				}
			}
			s.c.Write(tc.send)
			s.c.CloseWrite() // a cut frame is cut
			code, msg := s.expectError(tc.code != 0)
			if code != tc.code || !strings.Contains(msg, tc.msg) {
				t.Fatalf("error %d %q, want %d containing %q", code, msg, tc.code, tc.msg)
			}

			// Untouched: nothing reached the pty or meta.json, and the
			// next server is served.
			if end := th.h.out.End(); end != 5 {
				t.Fatalf("the log grew to %d", end)
			}
			if m, err := sessiondir.ReadMeta(th.dir); err != nil || m.Cols != 80 || m.Rows != 24 || m.Cwd != th.dir || m.EndedAt != nil {
				t.Fatalf("meta.json %+v, %v: changed", m, err)
			}
			s2, wel := th.connect(0)
			if wel.End != 5 || wel.Exited {
				t.Fatalf("welcome %+v after the bad server", wel)
			}
			s2.w.Input([]byte("ok\n"))
			st := &stream{}
			s2.readTo(st, 5+len64("<ok>"))
			if string(st.data) != "ready<ok>" {
				t.Fatalf("the next server got %q", st.data)
			}
		})
	}
}

// Input, resize, signal and the meta.json frames act in the order the
// server sent them, all sent at once: the lines reach the child in order,
// each Resized frame comes back in order at an offset no earlier than the
// last, a signal sent before a line is handled before it, and a ping is
// answered.
func TestServeFramesInOrder(t *testing.T) {
	th := startHolder(t, `trap 'printf "<USR1>"' USR1; printf ready; while read -r l; do printf "<%s>" "$l"; done`, 0)
	th.waitEnd(5)
	s, _ := th.connect(0)
	var sent bytes.Buffer
	w := wire.NewWriter(&sent)
	var want strings.Builder
	want.WriteString("ready")
	var wantResized []string
	for i := 1; i <= 100; i++ {
		w.Input([]byte(fmt.Sprintf("%d\n", i)))
		fmt.Fprintf(&want, "<%d>", i)
		if i%10 == 0 {
			cols, rows := uint16(80+i/10), uint16(24+i/5)
			w.Resize(cols, rows)
			wantResized = append(wantResized, fmt.Sprintf("%dx%d", cols, rows))
		}
	}
	w.Signal(uint8(syscall.SIGUSR1))
	w.Input([]byte("last\n"))
	w.Uint64(wire.TypePing, 7)
	w.Frame(wire.TypeCwd, []byte("/srv/x"))
	w.Frame(wire.TypeName, []byte("build"))
	if _, err := s.c.Write(sent.Bytes()); err != nil {
		t.Fatal(err)
	}

	var out []byte
	var resized []string
	lastAt := uint64(0)
	pong := false
	deadline := time.Now().Add(wait)
	for !bytes.HasSuffix(out, []byte("<last>")) || !pong || len(resized) < len(wantResized) {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: output %q, resized %v, pong %v", wait, out, resized, pong)
		}
		f := s.next()
		switch f.Type {
		case wire.TypeOutput:
			_, data, _ := wire.ParseOutput(f.Payload)
			out = append(out, data...)
		case wire.TypeResized:
			off, cols, rows, _ := wire.ParseResized(f.Payload)
			if off < lastAt {
				t.Fatalf("resized at %d after one at %d", off, lastAt)
			}
			lastAt = off
			resized = append(resized, fmt.Sprintf("%dx%d", cols, rows))
		case wire.TypePong:
			v, _ := wire.ParseUint64(f.Type, f.Payload)
			pong = v == 7
		}
	}
	if got, want := string(out), want.String()+"<USR1><last>"; got != want {
		t.Fatalf("the child got\n%s\nwant\n%s", got, want)
	}
	if fmt.Sprint(resized) != fmt.Sprint(wantResized) {
		t.Fatalf("resized %v, want %v", resized, wantResized)
	}
	if ws, err := getWinsize(th.h.ptmx); err != nil || ws.Col != 90 || ws.Row != 44 {
		t.Fatalf("the pty is %dx%d (%v), want 90x44", ws.Col, ws.Row, err)
	}
	// meta.json is written off the connection's goroutine: poll.
	for {
		m, err := sessiondir.ReadMeta(th.dir)
		if err == nil && m.Cols == 90 && m.Rows == 44 && m.Cwd == "/srv/x" && m.Name == "build" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("meta.json %+v, %v; want 90x44, cwd /srv/x, name build", m, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// getWinsize returns the pty's size, as the child sees it.
func getWinsize(f *os.File) (*unix.Winsize, error) {
	var ws *unix.Winsize
	err := control(f, func(fd int) error {
		var err error
		ws, err = unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
		return err
	})
	if ws == nil {
		ws = new(unix.Winsize)
	}
	return ws, err
}

// A resize storm while output floods: every size the server sets comes
// back as a Resized frame, before the output that follows it. A resize
// recorded between the forwarder's look at the pending sizes and its read
// of the log was skipped, about one in a thousand: the read went past its
// offset. Each resize here is checked once the stream has passed the log's
// end as it was after the resize, so a lost one fails the test however
// slow the machine.
func TestForwardResizeStorm(t *testing.T) {
	th := startHolder(t, "while :; do printf 0123456789; done", 0)
	th.waitEnd(1)
	s, wel := th.connect(wire.FromEnd)
	st := &stream{from: wel.Start, discard: true}
	const storm = 1500
	for i := range storm {
		cols := uint16(100 + i%2) // each one a change
		s.w.Resize(cols, 30)
		deadline := time.Now().Add(wait)
		for {
			th.h.mu.Lock()
			applied := th.h.meta.Cols == cols
			th.h.mu.Unlock()
			if applied {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("resize %d was not applied within %v", i, wait)
			}
			time.Sleep(50 * time.Microsecond)
		}
		s.readTo(st, th.h.out.End()+1)
		if len(st.trace) != i+1 {
			t.Fatalf("after %d resizes the stream passed their offsets with %d resized frames", i+1, len(st.trace))
		}
	}
}

// nextResize's table: what the forwarder sends and reads next, with the
// hostile cases (a storm at one offset, sizes from before the stream, a
// resize just recorded at the end).
func TestNextResize(t *testing.T) {
	r := func(off uint64, cols uint16) resizeAt { return resizeAt{off: off, cols: cols, rows: 24} }
	for _, tc := range []struct {
		name     string
		pending  []resizeAt
		off, end uint64
		room     int
		rest     []resizeAt
		due      *resizeAt
		limit    int
	}{
		{"nothing pending, far behind", nil, 0, 1 << 20, 4096, nil, nil, 4096},
		{"nothing pending, near the end", nil, 100, 150, 4096, nil, nil, 50},
		{"caught up", nil, 150, 150, 4096, nil, nil, 0},
		{"a resize ahead", []resizeAt{r(120, 90)}, 100, 200, 4096, []resizeAt{r(120, 90)}, nil, 20},
		{"a resize past the room", []resizeAt{r(9000, 90)}, 100, 10000, 4096, []resizeAt{r(9000, 90)}, nil, 4096},
		{"a resize due", []resizeAt{r(100, 90), r(130, 91)}, 100, 200, 4096, []resizeAt{r(130, 91)}, &resizeAt{off: 100, cols: 90, rows: 24}, 0},
		{"a storm at one offset: one at a time, in order", []resizeAt{r(100, 90), r(100, 91), r(100, 92)}, 100, 100, 4096,
			[]resizeAt{r(100, 91), r(100, 92)}, &resizeAt{off: 100, cols: 90, rows: 24}, 0},
		{"sizes from before the stream are dropped", []resizeAt{r(10, 81), r(50, 82), r(120, 83)}, 100, 200, 4096,
			[]resizeAt{r(120, 83)}, nil, 20},
		{"all from before the stream", []resizeAt{r(10, 81), r(50, 82)}, 100, 200, 4096, nil, nil, 100},
		{"just recorded at the end", []resizeAt{r(200, 90)}, 150, 200, 4096, []resizeAt{r(200, 90)}, nil, 50},
		{"an end behind the cursor reads nothing", nil, 150, 100, 4096, nil, nil, 0},
		{"no room", nil, 0, 100, 0, nil, nil, 0},
	} {
		rest, due, limit := nextResize(tc.pending, tc.off, tc.end, tc.room)
		if fmt.Sprint(rest) != fmt.Sprint(tc.rest) || fmt.Sprint(due) != fmt.Sprint(tc.due) || limit != tc.limit {
			t.Errorf("%s: got %v, %v, %d; want %v, %v, %d", tc.name, rest, due, limit, tc.rest, tc.due, tc.limit)
		}
	}
}
