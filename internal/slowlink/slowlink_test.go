package slowlink

import (
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"testing"
	"time"
)

// echoServer echoes every connection until the test ends; it returns its
// port.
func echoServer(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

func proxied(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", itoa(p.Port())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func itoa(n int) string { return strconv.Itoa(n) }

// roundTrip writes msg and reads it back, returning how long it took.
func roundTrip(t *testing.T, c net.Conn, msg string) time.Duration {
	t.Helper()
	began := time.Now()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != msg {
		t.Fatalf("read back %q, want %q", got, msg)
	}
	return time.Since(began)
}

// A delay holds each chunk that long each way on the connections made
// after it is set, and keeps their bytes in order.
func TestDelay(t *testing.T) {
	p, err := Start(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	before := proxied(t, p)
	roundTrip(t, before, "zero") // accepted: a dial returns before the proxy has taken it
	const d = 100 * time.Millisecond
	p.SetDelay(d)
	after := proxied(t, p)
	if took := roundTrip(t, after, "one"); took < 2*d {
		t.Errorf("a round trip took %s, under twice the delay %s", took, d)
	}
	for i := range 20 {
		after.Write([]byte{byte('a' + i)})
	}
	got := make([]byte, 20)
	after.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(after, got); err != nil || string(got) != "abcdefghijklmnopqrst" {
		t.Errorf("read back %q, %v: not the bytes written, in order", got, err)
	}
	if took := roundTrip(t, before, "two"); took >= d {
		t.Errorf("a connection made before the delay took %s", took)
	}
}

// A stall holds every byte, new connections' too, and lets them through
// in order once it ends.
func TestStall(t *testing.T) {
	p, err := Start(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	old := proxied(t, p)
	roundTrip(t, old, "x")
	const d = 300 * time.Millisecond
	over := p.Stall(d)
	began := time.Now()
	fresh := proxied(t, p)
	for _, c := range []net.Conn{old, fresh} {
		if took := roundTrip(t, c, "held"); time.Since(began) < d {
			t.Errorf("bytes came back %s into a stall of %s", took, d)
		}
	}
	select {
	case <-over:
	default:
		t.Error("the stall is over, and its channel is not closed")
	}
}

// Close ends a stall and every connection, and returns.
func TestCloseDuringStall(t *testing.T) {
	p, err := Start(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	c := proxied(t, p)
	roundTrip(t, c, "x")
	over := p.Stall(time.Hour)
	c.Write([]byte("held"))
	p.Close()
	<-over
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// Its end is an EOF or a reset (the proxy closed with bytes unread).
	if _, err := io.ReadAll(c); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection did not end at Close: %v", err)
	}
}
