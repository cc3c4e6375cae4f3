package session

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"termkeep/internal/wire"
)

// A holder that does not read (stopped) costs a write at most the
// deadline, and the writes that outlived it still reach the holder whole
// and in order once it reads again: no frame is cut.
func TestHolderConnSendDeadline(t *testing.T) {
	a, b := unixPair(t)
	u := newHolderConn(a, 300*time.Millisecond)
	big := bytes.Repeat([]byte("x"), 3<<20) // more than the socket holds

	began := time.Now()
	err := u.send(func(w *wire.Writer) error { return w.Input(big) })
	if !errors.Is(err, ErrHolderStuck) {
		t.Fatalf("3 MiB to a peer that does not read: %v, want ErrHolderStuck", err)
	}
	if d := time.Since(began); d > 20*time.Second {
		t.Fatalf("the write took %s with a deadline of 300ms", d)
	}
	// The next write waits for the first, within its own deadline, and is
	// not sent.
	err = u.send(func(w *wire.Writer) error { return w.Input([]byte("lost")) })
	if !errors.Is(err, ErrHolderStuck) {
		t.Fatalf("a write behind a stuck one: %v, want ErrHolderStuck", err)
	}

	// The peer reads again: the big input arrives whole, then a later
	// write does.
	got := make(chan []byte, 1)
	go func() {
		var all []byte
		var buf []byte
		for {
			f, err := wire.ReadFrame(b, &buf)
			if err != nil {
				got <- all
				return
			}
			if f.Type != wire.TypeInput {
				t.Errorf("frame %s", f.Type)
			}
			all = append(all, f.Payload...)
			if bytes.HasSuffix(all, []byte("after")) {
				got <- all
				return
			}
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := u.send(func(w *wire.Writer) error { return w.Input([]byte("after")) })
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still refused once the peer reads: %v", err)
		}
	}
	all := <-got
	if want := append(append([]byte(nil), big...), "after"...); !bytes.Equal(all, want) {
		t.Fatalf("the peer got %d bytes, want %d (the big input whole, then the later write)", len(all), len(want))
	}
}

func unixPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	dir := t.TempDir()
	l, err := net.Listen("unix", dir+"/s")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		acc <- c
	}()
	a, err := net.Dial("unix", dir+"/s")
	if err != nil {
		t.Fatal(err)
	}
	b := <-acc
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

var _ io.Writer = (*stallWriter)(nil)
