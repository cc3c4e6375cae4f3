//go:build linux

package attach

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"termkeep/internal/client"
	"termkeep/internal/session/liveness"
	"termkeep/internal/wire"
)

// testTerminal is a pty of 80x24 for attach (tty) and its other side
// (ptmx), closed when the test ends; drain reads what attach draws.
func testTerminal(t *testing.T, drain bool) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	pty.Setsize(ptmx, &pty.Winsize{Cols: 80, Rows: 24})
	if drain {
		go func() {
			b := make([]byte, 4096)
			for {
				if _, err := ptmx.Read(b); err != nil {
					return
				}
			}
		}()
	}
	return ptmx, tty
}

// welcome is a server's side of attach's hello on c: it reads the
// upgrade request and the hello, and answers with a welcome to a
// session of 80x24.
func welcome(c net.Conn) (*bufio.Reader, *wire.Writer, error) {
	r := bufio.NewReader(c)
	if _, err := http.ReadRequest(r); err != nil {
		return nil, nil, err
	}
	var buf []byte
	if f, err := wire.ReadFrame(r, &buf); err != nil || f.Type != wire.TypeHello {
		return nil, nil, fmt.Errorf("hello: %v %v", f.Type, err)
	}
	c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: termkeep-wire\r\nConnection: Upgrade\r\n\r\n"))
	w := wire.NewWriter(c)
	return r, w, w.JSON(wire.TypeWelcome, wire.Welcome{Version: wire.Version, Session: "s1", Cols: 80, Rows: 24})
}

// socketPair is a connected pair of unix sockets, buffered as a pipe to
// ssh is: a peer that stops reading does not block the writer at once.
func socketPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]net.Conn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	return conns[0], conns[1]
}

// Over a link that may drop everything without a word, attach pings the
// server and gives a connection up once it has been silent past the
// keepalive's limit; the next connection resumes after the last byte on
// the terminal. While it waits for a connection, the detach key detaches.
func TestAttachKeepalive(t *testing.T) {
	ptmx, tty := testTerminal(t, true)

	hellos := make(chan wire.Hello, 4)
	pinged := make(chan int, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opened := 0
	open := func(ctx context.Context, h wire.Hello, _ func(string)) (*client.Stream, error) {
		hellos <- h
		opened++
		if opened > 1 {
			<-ctx.Done() // no route to the server: until a detach
			return nil, ctx.Err()
		}
		a, b := socketPair(t)
		go serveSilentAfterPings(t, b, 3, pinged)
		return client.AttachOver(ctx, a, "s1", h)
	}
	ended := make(chan error, 1)
	began := time.Now()
	go func() {
		ended <- Run(ctx, Config{Ref: "s1", In: tty, Out: tty, Open: open, DetachKey: 0x1c, Lanes: "off",
			Keepalive: liveness.Config{Interval: 100 * time.Millisecond, Timeout: 300 * time.Millisecond}})
	}()
	if h := <-hellos; h.From != wire.FromSnapshot {
		t.Fatalf("the first connection asked from %d", h.From)
	}
	select {
	case n := <-pinged:
		if n != 3 {
			t.Fatalf("answered %d pings", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("attach sent no pings")
	}
	var h wire.Hello
	select {
	case h = <-hellos:
	case <-time.After(5 * time.Second):
		t.Fatal("attach kept a silent connection")
	}
	if took := time.Since(began); took < 400*time.Millisecond {
		t.Errorf("attach gave the connection up after %s, before the keepalive's limit", took)
	}
	if h.From != int64(len("hello")) {
		t.Errorf("the next connection asked from %d; want %d, after the bytes on the terminal", h.From, len("hello"))
	}
	ptmx.Write([]byte{0x1c})
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("attach ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the detach key did not end attach while it waited for a connection")
	}
}

// serveSilentAfterPings is a server that welcomes attach, sends "hello",
// answers n pings and then reads on without a word (says how many it
// answered on pinged, once).
func serveSilentAfterPings(t *testing.T, c net.Conn, n int, pinged chan<- int) {
	defer c.Close()
	r, w, err := welcome(c)
	if err != nil {
		t.Error(err)
		return
	}
	var buf []byte
	w.Output(0, []byte("hello"))
	answered := 0
	for {
		f, err := wire.ReadFrame(r, &buf)
		if err != nil {
			return
		}
		if f.Type == wire.TypePing && answered < n {
			x, _ := wire.ParseUint64(f.Type, f.Payload)
			w.Uint64(wire.TypePong, x)
			if answered++; answered == n {
				pinged <- n
			}
		}
	}
}

// A terminal that takes nothing for a while (a slow terminal, or Ctrl-S)
// holds attach's reader up: that is no silence of the server's, and the
// connection is kept.
func TestAttachKeepaliveSlowTerminal(t *testing.T) {
	ptmx, tty := testTerminal(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opened := make(chan struct{}, 4)
	open := func(ctx context.Context, h wire.Hello, _ func(string)) (*client.Stream, error) {
		opened <- struct{}{}
		a, b := socketPair(t)
		go serveFlood(b, 512<<10)
		return client.AttachOver(ctx, a, "s1", h)
	}
	ended := make(chan error, 1)
	go func() {
		ended <- Run(ctx, Config{Ref: "s1", In: tty, Out: tty, Open: open, DetachKey: -1, Lanes: "off",
			Keepalive: liveness.Config{Interval: 100 * time.Millisecond, Timeout: 300 * time.Millisecond}})
	}()
	<-opened
	time.Sleep(1500 * time.Millisecond) // the terminal takes nothing: attach's writes wait
	got := 0
	b := make([]byte, 64<<10)
	for got < 512<<10 {
		ptmx.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := ptmx.Read(b)
		if err != nil {
			t.Fatalf("the terminal got %d bytes: %v", got, err)
		}
		got += n
	}
	select {
	case <-opened:
		t.Fatal("attach gave up a connection while its terminal was slow")
	default:
	}
	cancel()
	<-ended
}

// serveFlood welcomes attach, sends n bytes of output and answers every
// ping until the connection ends.
func serveFlood(c net.Conn, n int) {
	defer c.Close()
	r, w, err := welcome(c)
	if err != nil {
		return
	}
	var buf []byte
	var mu sync.Mutex // guards w
	go func() {
		line := []byte("0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\r\n")
		for off := 0; off < n; off += len(line) {
			mu.Lock()
			err := w.Output(uint64(off), line)
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	for {
		f, err := wire.ReadFrame(r, &buf)
		if err != nil {
			return
		}
		if f.Type == wire.TypePing {
			x, _ := wire.ParseUint64(f.Type, f.Payload)
			mu.Lock()
			w.Uint64(wire.TypePong, x)
			mu.Unlock()
		}
	}
}
