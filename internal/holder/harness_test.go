package holder

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
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
	done <-chan struct{} // closed when serve has returned
}

// startHolder starts a holder running script under bash in a pty whose
// terminal is made raw first (so that the log holds exactly what the script
// writes), with retention bytes of log (0: the default).
func startHolder(t *testing.T, script string, retention int64) *testHolder {
	t.Helper()
	return startHolderWith(t, script, Spec{LogRetention: retention}, nil)
}

// startHolderWith is startHolder with the spec's Linger and LogRetention
// from spec, meta.json and the status record written through disk.
func startHolderWith(t *testing.T, script string, spec Spec, disk sessiondir.Through) *testHolder {
	t.Helper()
	// A short directory: a unix socket's path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "tkh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// As Main does (holdSignals): a test run with SIGHUP ignored (under
	// nohup) must not hand that to the child.
	signal.Notify(make(chan os.Signal, 1), strays...)
	h, err := start(Spec{
		ID: "t1", Dir: dir, Cols: 80, Rows: 24, LogRetention: spec.LogRetention, Linger: spec.Linger, LogSync: "never",
		Command: []string{"bash", "--noprofile", "--norc", "-c", "stty raw -echo; " + script},
		Env:     []string{"PATH=" + os.Getenv("PATH"), "TERM=dumb", "LC_ALL=C"},
		Cwd:     dir,
	}, disk)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	th := &testHolder{t: t, h: h, dir: dir, done: done}
	go func() { h.serve(); close(done) }()
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

// endedMeta waits for the holder to end, after its Exit frame, and
// returns its meta.json.
func (th *testHolder) endedMeta() (sessiondir.Meta, error) {
	th.t.Helper()
	select {
	case <-th.done:
	case <-time.After(wait):
		th.t.Fatalf("the holder still runs %v after the Exit frame", wait)
	}
	return sessiondir.ReadMeta(th.dir)
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
	// modes are the term-mode frames received, in order (not in trace:
	// the holder sends one at connect and whenever the pty's mode changes).
	modes []wire.TermMode
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
		case wire.TypeTermMode:
			m, _ := wire.ParseTermMode(f.Payload)
			st.modes = append(st.modes, m)
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

func len64(s string) uint64 { return uint64(len(s)) }

func frame(t wire.Type, payload []byte) []byte {
	b := []byte{byte(t), 0, 0, 0, 0}
	n := len(payload)
	b[1], b[2], b[3], b[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return append(b, payload...)
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

// echoLines is a child that prints "ready", then each line it reads as
// "<line>".
const echoLines = `printf ready; while read -r l; do printf "<%s>" "$l"; done`

// untouched checks, for an echoLines session that printed only "ready",
// that a new server is served from the start and the child still answers
// (with <word>): nothing a bad peer sent reached the log or the pty.
func (th *testHolder) untouched(word string) {
	th.t.Helper()
	s, wel := th.connect(0)
	if wel.End != 5 || wel.Exited {
		th.t.Fatalf("welcome %+v, want the log at 5 and the session running", wel)
	}
	s.w.Input([]byte(word + "\n"))
	st := &stream{}
	s.readTo(st, 5+len64("<"+word+">"))
	if want := "ready<" + word + ">"; string(st.data) != want {
		th.t.Fatalf("the next server got %q, want %q", st.data, want)
	}
}
