package restart

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// garbage is a set of byte strings no peer should survive, sent on every socket.
var garbage = map[string][]byte{
	"unknown type":     {0x7e, 0, 0, 0, 1, 'x'},
	"oversized length": {byte(wire.TypeInput), 0xff, 0xff, 0xff, 0xff},
	"just over bound":  binary.BigEndian.AppendUint32([]byte{byte(wire.TypeInput)}, wire.MaxPayload+1),
	"bad hello json":   append(binary.BigEndian.AppendUint32([]byte{byte(wire.TypeHello)}, 5), "{{{{{"...),
	"not a hello":      append(binary.BigEndian.AppendUint32([]byte{byte(wire.TypePing)}, 8), 0, 0, 0, 0, 0, 0, 0, 1),
	"text":             []byte("GET / HTTP/1.0\r\n\r\n"),
}

// readError reads frames until an Error frame or the end of the connection
// and reports whether an Error frame came and the connection then closed.
func readError(t *testing.T, c net.Conn) (gotError bool) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var buf []byte
	for {
		f, err := wire.ReadFrame(c, &buf)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the peer neither answered nor closed the connection")
			}
			return gotError
		}
		if f.Type == wire.TypeError {
			gotError = true
		}
	}
}

// Garbage and oversized frames on the holder's socket: an error, a closed
// connection, and a holder that keeps serving.
func TestHolderSocketGarbage(t *testing.T) {
	e := e2e.NewEnv(t)
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--name", "h", "--", "cat"))
	sock := filepath.Join(e.Dir, "sessions", id, sessiondir.SocketFile)
	for name, g := range garbage {
		t.Run(name, func(t *testing.T) {
			c, err := e2e.DialUnix(sock)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write(g)
			if !readError(t, c) && name != "oversized length" && name != "just over bound" && name != "text" {
				t.Errorf("no error frame")
			}
		})
	}
	// Garbage after a valid hello. A server-role hello takes the holder's
	// one upstream over, and the server would take it back at once: stop
	// the server meanwhile, so the answer read here is the holder's.
	e.KillServer()
	c, err := e2e.DialUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	w := wire.NewWriter(c)
	w.JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: wire.RoleServer, From: wire.FromEnd})
	w.Frame(wire.TypeResize, []byte{0, 0, 0, 0})
	if !readError(t, c) {
		t.Error("no error frame for a zero-size resize")
	}
	c.Close()
	e.StartServer()
	// The holder serves the next server, and the session still works.
	e.MustTk("send", "h", "alive after garbage")
	if _, errs, code := e.Tk("wait", "h", "--from", "start", "--output", "alive after garbage", "--timeout", "20s"); code != 0 {
		t.Fatalf("session broken after garbage on the holder socket: %d %s", code, errs)
	}
	if s := e.Session(id); s.State != "running" {
		t.Fatalf("session is %s", s.State)
	}
}

// Garbage and oversized frames on the server's socket: an error, a closed
// connection, and a server that keeps serving.
func TestServerSocketGarbage(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--name", "g", "--", "cat"))
	sock := filepath.Join(e.Dir, "server.sock")
	upgrade := func(t *testing.T) net.Conn {
		c, err := e2e.DialUnix(sock)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /v1/sessions/%s/attach HTTP/1.1\r\nHost: termkeep\r\nConnection: Upgrade\r\nUpgrade: termkeep-wire\r\n\r\n", id)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("upgrade: %v %v", resp, err)
		}
		return c
	}
	for name, g := range garbage {
		t.Run("before hello/"+name, func(t *testing.T) {
			c := upgrade(t)
			defer c.Close()
			c.Write(g)
			readError(t, c)
		})
	}
	bad := map[string][]byte{
		"zero resize":  append(binary.BigEndian.AppendUint32([]byte{byte(wire.TypeResize)}, 4), 0, 0, 0, 0),
		"signal 0":     append(binary.BigEndian.AppendUint32([]byte{byte(wire.TypeSignal)}, 1), 0),
		"holder close": append(binary.BigEndian.AppendUint32([]byte{byte(wire.TypeClose)}, 4), 0, 0, 0, 0),
		"output":       append(binary.BigEndian.AppendUint32([]byte{byte(wire.TypeOutput)}, 8), 0, 0, 0, 0, 0, 0, 0, 0),
		"unknown":      {0x3f, 0, 0, 0, 0},
		"huge":         {byte(wire.TypeInput), 0x7f, 0xff, 0xff, 0xff},
	}
	for name, g := range bad {
		t.Run("after hello/"+name, func(t *testing.T) {
			c := upgrade(t)
			defer c.Close()
			w := wire.NewWriter(c)
			w.JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromEnd})
			c.Write(g)
			if !readError(t, c) {
				t.Error("no error frame")
			}
		})
	}
	// Raw garbage where HTTP is expected, and a client that goes away mid-frame.
	for _, g := range [][]byte{[]byte("\x00\x01\x02garbage\r\n\r\n"), []byte(strings.Repeat("A", 1<<20))} {
		c, err := e2e.DialUnix(sock)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(g)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		io.Copy(io.Discard, c)
		c.Close()
	}
	c := upgrade(t)
	wire.NewWriter(c).JSON(wire.TypeHello, wire.Hello{Version: wire.Version, Role: wire.RoleViewer})
	c.Write([]byte{byte(wire.TypeInput), 0, 0, 1, 0, 'x'}) // cut mid-payload
	c.Close()
	// An old protocol version is refused with a clear error.
	c = upgrade(t)
	wire.NewWriter(c).JSON(wire.TypeHello, wire.Hello{Version: 0, Role: wire.RoleViewer})
	if !readError(t, c) {
		t.Error("version 0 accepted")
	}
	c.Close()

	// The server still serves, and the session still works.
	if _, err := e.C.Health(context.Background()); err != nil {
		t.Fatalf("server stopped answering: %v", err)
	}
	e.MustTk("send", "g", "still fine")
	if _, errs, code := e.Tk("wait", "g", "--from", "start", "--output", "still fine", "--timeout", "20s"); code != 0 {
		t.Fatalf("session broken: %d %s", code, errs)
	}
}
