package attach

import (
	"bytes"
	"errors"
	"io"
	"os"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// openRawPair opens a pty in raw mode and attach's raw descriptor of its
// terminal side: the test types into ptmx and reads what attach writes.
func openRawPair(t *testing.T) (*os.File, *rawTerm) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatal(err)
	}
	fd := openTerminal(tty, tty)
	if fd < 0 {
		t.Fatal("openTerminal declined a terminal")
	}
	rt, err := newRawTerm(fd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return ptmx, rt
}

// reads runs a reader as readInput does: each chunk is handled before the
// next Read.
func reads(rt *rawTerm) (<-chan []byte, <-chan error) {
	ch, errc := make(chan []byte, 1024), make(chan error, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := rt.Read(buf)
			if n > 0 {
				ch <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				errc <- err
				return
			}
		}
	}()
	return ch, errc
}

// collect gathers chunks until want bytes came or the time is up.
func collect(ch <-chan []byte, want int, d time.Duration) []byte {
	var got []byte
	deadline := time.After(d)
	for len(got) < want {
		select {
		case b := <-ch:
			got = append(got, b...)
		case <-deadline:
			return got
		}
	}
	return got
}

// watched reports whether the terminal is in rt's epoll set, as the kernel
// lists it.
func watched(t *testing.T, rt *rawTerm) bool {
	t.Helper()
	var info []byte
	var err error
	rt.rc.Control(func(epfd uintptr) { info, err = os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(int(epfd))) })
	if err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(`(?m)^tfd:\s+` + strconv.Itoa(rt.fd) + `\s`).Match(info)
}

// Bytes typed while the reader is paused stay in the terminal and are read
// after resume, in order, none lost or doubled; pause returns promptly
// though the reader waits for the terminal.
func TestRawTermPauseResume(t *testing.T) {
	ptmx, rt := openRawPair(t)
	ch, _ := reads(rt)

	ptmx.Write([]byte("ab"))
	if got := collect(ch, 2, 5*time.Second); string(got) != "ab" {
		t.Fatalf("before pause: read %q", got)
	}
	time.Sleep(20 * time.Millisecond) // the reader waits in poll(2)
	start := time.Now()
	rt.pause()
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("pause took %v while the reader waited", d)
	}
	var want bytes.Buffer
	for i := 0; i < 50; i++ {
		b := []byte{byte('a' + i%26)}
		want.Write(b)
		ptmx.Write(b)
	}
	time.Sleep(100 * time.Millisecond)
	select {
	case b := <-ch:
		t.Fatalf("read %q while paused", b)
	default:
	}
	// The bytes are still in the terminal: another reader of it sees them.
	fds := []unix.PollFd{{Fd: int32(rt.fd), Events: unix.POLLIN}}
	if n, _ := unix.Poll(fds, 0); n != 1 {
		t.Fatal("the typed bytes are not waiting in the terminal")
	}
	if watched(t, rt) {
		t.Fatal("the terminal is in attach's epoll set while paused")
	}
	rt.resume()
	if !watched(t, rt) {
		t.Fatal("the terminal is not in attach's epoll set after resume")
	}
	if got := collect(ch, want.Len(), 5*time.Second); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("after resume: read %q, want %q", got, want.Bytes())
	}
	// Pausing twice, resuming twice, and pause while paused do not hang.
	rt.pause()
	rt.pause()
	rt.resume()
	rt.resume()
	ptmx.Write([]byte("z"))
	if got := collect(ch, 1, 5*time.Second); string(got) != "z" {
		t.Fatalf("after a second pause: read %q", got)
	}
}

// pause waits for the chunk the reader is handling: it returns only once
// the reader is back (and will not read), not while a chunk it read is
// still on its way.
func TestRawTermPauseWaitsForTheChunk(t *testing.T) {
	ptmx, rt := openRawPair(t)
	handling := make(chan struct{})
	release := make(chan struct{})
	go func() {
		buf := make([]byte, 64)
		rt.Read(buf)
		close(handling)
		<-release
		rt.Read(buf) // parks: paused
	}()
	ptmx.Write([]byte("x"))
	<-handling
	paused := make(chan struct{})
	go func() { rt.pause(); close(paused) }()
	select {
	case <-paused:
		t.Fatal("pause returned while the reader still handled a chunk")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-paused:
	case <-time.After(5 * time.Second):
		t.Fatal("pause did not return once the reader came back")
	}
	rt.resume()
}

// A write to a terminal that does not read waits without spinning, and
// finishes when the terminal reads again.
func TestRawTermWriteWaits(t *testing.T) {
	ptmx, rt := openRawPair(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: more than a pty holds
	var before syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	done := make(chan error, 1)
	go func() {
		n, err := rt.Write(big)
		if err == nil && n != len(big) {
			err = io.ErrShortWrite
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the write finished (%v) though nothing read the terminal", err)
	case <-time.After(300 * time.Millisecond):
	}
	var after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	if cpu > 150*time.Millisecond {
		t.Fatalf("a waiting write used %v of CPU in 300 ms: it spins", cpu)
	}
	var got int
	buf := make([]byte, 64<<10)
	for got < len(big) {
		n, err := ptmx.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got += n
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A terminal that hangs up ends the reader, paused or not.
func TestRawTermHangUp(t *testing.T) {
	ptmx, rt := openRawPair(t)
	_, errc := reads(rt)
	time.Sleep(20 * time.Millisecond)
	ptmx.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("reader ended with %v, want EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the reader did not end when the terminal hung up")
	}
}

// Close ends a reader that waits, and one that is paused.
func TestRawTermClose(t *testing.T) {
	for _, paused := range []bool{false, true} {
		_, rt := openRawPair(t)
		_, errc := reads(rt)
		time.Sleep(20 * time.Millisecond)
		if paused {
			rt.pause()
		}
		rt.Close()
		select {
		case <-errc:
		case <-time.After(5 * time.Second):
			t.Fatalf("paused %v: the reader did not end at Close", paused)
		}
	}
}

// A terminal that is not the process's controlling one is not led by it:
// no input lane could see that attach still has it.
func TestRawTermLeads(t *testing.T) {
	_, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	fd, err := unix.Dup(int(tty.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	rt := &rawTerm{fd: fd}
	defer unix.Close(fd)
	if rt.leads() {
		t.Fatal("a pty the test process does not control counts as led by it")
	}
}
