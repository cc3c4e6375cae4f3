package rawio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestReadWriteConn(t *testing.T) {
	c, s := socketPair(t)
	crc, _ := c.SyscallConn()
	src, _ := s.SyscallConn()

	// A write larger than the socket's buffer waits in the poller for the
	// reader, and every byte arrives in order.
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	done := make(chan error, 1)
	go func() {
		n, err := Write(crc, big)
		if err == nil && n != len(big) {
			err = io.ErrShortWrite
		}
		done <- err
	}()
	var got []byte
	buf := make([]byte, 64<<10)
	for len(got) < len(big) {
		n, err := Read(src, buf)
		if err != nil {
			t.Fatalf("read after %d bytes: %v", len(got), err)
		}
		got = append(got, buf[:n]...)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, big) {
		t.Fatal("the bytes read differ from the bytes written")
	}

	// A read with nothing to read waits, and its deadline ends the wait.
	s.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := Read(src, buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	s.SetReadDeadline(time.Time{})
	c.Close()
	if _, err := Read(src, buf); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want EOF", err)
	}
}

// A Conn reads and writes raw, keeps the connection's deadlines, and closes
// it; a connection without a descriptor of its own is left as it is.
func TestConn(t *testing.T) {
	a, b := socketPair(t)
	c, d := NewConn(a), NewConn(b)
	if _, ok := c.(*Conn); !ok {
		t.Fatalf("NewConn of a unix socket is %T, want *Conn", c)
	}
	big := bytes.Repeat([]byte("termkeep"), 1<<17) // 1 MiB: more than the socket holds
	go c.Write(big)
	got, err := io.ReadAll(io.LimitReader(d, int64(len(big))))
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read %d bytes (%v), want the %d written", len(got), err, len(big))
	}
	d.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := d.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	d.SetReadDeadline(time.Time{})
	if _, err := d.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read after the peer's Close: %v, want EOF", err)
	}
	p, q := net.Pipe()
	defer q.Close()
	if NewConn(p) != p {
		t.Fatal("NewConn wrapped a connection that has no descriptor")
	}
}

// ReadLazy holds a buffer only while there is something to read: every
// buffer it got went back or came out with bytes in it, and the bytes are
// the ones written.
func TestReadLazy(t *testing.T) {
	c, s := socketPair(t)
	src, _ := s.SyscallConn()
	var out, back int
	get := func() []byte { out++; return make([]byte, 7) }
	put := func([]byte) { back++ }
	go func() {
		time.Sleep(50 * time.Millisecond) // the first try finds nothing
		c.Write([]byte("hello, lazy reader"))
	}()
	var got []byte
	for len(got) < len("hello, lazy reader") {
		b, n, err := ReadLazy(src, get, put)
		if err != nil {
			t.Fatalf("read after %q: %v", got, err)
		}
		got = append(got, b[:n]...)
		put(b)
	}
	if string(got) != "hello, lazy reader" {
		t.Fatalf("read %q", got)
	}
	if out != back || out < 3 {
		t.Fatalf("%d buffers got, %d put back; want equal, at least 3", out, back)
	}

	// Nothing to read: the buffer of the first try goes back for the wait.
	s.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	before := out
	if b, _, err := ReadLazy(src, get, put); !errors.Is(err, os.ErrDeadlineExceeded) || b != nil {
		t.Fatalf("read past the deadline: %v (buffer %v)", err, b != nil)
	}
	if out == before || out != back {
		t.Fatalf("waiting: %d buffers got (%d before), %d put back", out, before, back)
	}
	s.SetReadDeadline(time.Time{})
	c.Close()
	if b, _, err := ReadLazy(src, get, put); err != io.EOF || b != nil {
		t.Fatalf("read after the peer closed: %v (buffer %v), want EOF and none", err, b != nil)
	}
	if out != back {
		t.Fatalf("%d buffers got, %d put back", out, back)
	}
}

func TestFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	of, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f := File{of}
	defer f.Close()
	for _, s := range []string{"hello, ", "world"} {
		if n, err := f.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("write %q: %d %v", s, n, err)
		}
	}
	b := make([]byte, 5)
	if n, err := f.ReadAt(b, 7); n != 5 || err != nil || string(b) != "world" {
		t.Fatalf("ReadAt = %d %v %q", n, err, b)
	}
	if n, err := f.ReadAt(b, 10); n != 2 || err != io.EOF || string(b[:2]) != "ld" {
		t.Fatalf("ReadAt at the end = %d %v %q, want 2 EOF", n, err, b[:n])
	}
	ro, _ := os.Open(path)
	defer ro.Close()
	if _, err := (File{ro}).Write([]byte("x")); err == nil {
		t.Fatal("a write to a read-only file did not fail")
	}
}

// socketPair returns the two ends of a connected unix stream socket pair.
func socketPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ends [2]*net.UnixConn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f) // a dup: the poller's own descriptor
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		ends[i] = c.(*net.UnixConn)
		t.Cleanup(func() { c.Close() })
	}
	return ends[0], ends[1]
}

// ReadHolding holds its caller's mutex on return, whatever it returns,
// and lets go of it only while it waits; TryRead never waits, and reads
// what is there.
func TestReadHoldingAndTryRead(t *testing.T) {
	c, s := socketPair(t)
	src, _ := s.SyscallConn()
	buf := make([]byte, 64)
	if n, err := TryRead(src, buf); n != 0 || err != syscall.EAGAIN {
		t.Fatalf("TryRead with nothing to read: %d %v, want EAGAIN", n, err)
	}
	var mu sync.Mutex
	type res struct {
		n   int
		err error
	}
	readHolding := func() <-chan res {
		done := make(chan res, 1)
		go func() {
			n, err := ReadHolding(src, buf, &mu)
			done <- res{n, err}
		}()
		return done
	}
	// Only ReadHolding, waiting in the poller, can let go of the mutex the
	// caller holds.
	mu.Lock()
	done := readHolding()
	for deadline := time.Now().Add(10 * time.Second); !mu.TryLock(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("ReadHolding holds its mutex while it waits")
		}
	}
	// Under the mutex another reader takes what arrives first.
	c.Write([]byte("first"))
	other := make([]byte, 64)
	var n int
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if n, err = TryRead(src, other); err != syscall.EAGAIN {
			break
		}
	}
	if string(other[:n]) != "first" || err != nil {
		t.Fatalf("TryRead: %q %v, want \"first\"", other[:n], err)
	}
	mu.Unlock()
	c.Write([]byte("second"))
	r := <-done
	if r.err != nil || string(buf[:r.n]) != "second" {
		t.Fatalf("ReadHolding: %q %v, want \"second\"", buf[:r.n], r.err)
	}
	held := func(what string) {
		t.Helper()
		if mu.TryLock() {
			t.Fatalf("ReadHolding returned %s without holding its mutex", what)
		}
		mu.Unlock()
	}
	held("bytes")

	// Bytes already there: read at once, the mutex held throughout.
	c.Write([]byte("third"))
	mu.Lock()
	if r := <-readHolding(); r.err != nil || string(buf[:r.n]) != "third" {
		t.Fatalf("ReadHolding: %q %v, want \"third\"", buf[:r.n], r.err)
	}
	held("bytes that were there")

	// A deadline while waiting, and the end, return holding it too.
	s.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	mu.Lock()
	if r := <-readHolding(); !errors.Is(r.err, os.ErrDeadlineExceeded) {
		t.Fatalf("ReadHolding past the deadline: %d %v", r.n, r.err)
	}
	held("the deadline")
	s.SetReadDeadline(time.Time{})
	c.Close()
	mu.Lock()
	if r := <-readHolding(); r.n != 0 || r.err != io.EOF {
		t.Fatalf("ReadHolding after the peer closed: %d %v, want EOF", r.n, r.err)
	}
	held("EOF")
	if n, err := TryRead(src, buf); n != 0 || err != io.EOF {
		t.Fatalf("TryRead after the peer closed: %d %v, want EOF", n, err)
	}
	Yield()
}

// A Reader and a Writer kept by a hot path leave no garbage: a holder
// reads and writes for every key and every chunk of output, and its heap
// is kept small enough that it never needs a collection when idle.
func TestReaderWriterAllocateNothing(t *testing.T) {
	c, s := socketPair(t)
	crc, _ := c.SyscallConn()
	src, _ := s.SyscallConn()
	w, r := NewWriter(crc), NewReader(src)
	var mu sync.Mutex
	key, buf := []byte("k"), make([]byte, 16)
	allocs := testing.AllocsPerRun(200, func() {
		if n, err := w.Write(key); n != 1 || err != nil {
			t.Fatalf("write: %d, %v", n, err)
		}
		if n, err := w.TryWrite(key); n != 1 || err != nil {
			t.Fatalf("try write: %d, %v", n, err)
		}
		mu.Lock()
		n, err := r.ReadHolding(buf, &mu)
		mu.Unlock()
		if n != 2 || err != nil || buf[0] != 'k' {
			t.Fatalf("read: %q, %v", buf[:n], err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a write and a read made %v allocations; want 0", allocs)
	}
}
