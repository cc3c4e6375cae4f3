//go:build linux

package fdpass

import (
	"os"
	"sync"
	"syscall"
	"testing"

	"termkeep/internal/fdpass/fdpasstest"
)

// openFDs is how many descriptors the process has open.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// The connection's owner may close the reader while its reader goroutine
// still reads and takes (a viewer's read loop outliving its handler): no
// race, and no descriptor leaks, whichever comes first.
func TestReaderClosedWhileItReads(t *testing.T) {
	for range 50 {
		a, b := fdpasstest.Pair(t)
		rc, err := b.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		r := NewReader(rc)
		passed, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		got := make(chan int, 8)
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 16)
			for {
				if _, err := r.Read(buf); err != nil {
					return
				}
				if fd := r.Take(); fd >= 0 {
					got <- fd
				}
			}
		}()
		for range 4 {
			if err := Write(a, []byte("x"), int(passed.Fd())); err != nil {
				t.Fatal(err)
			}
		}
		r.Close()
		a.Close()
		wg.Wait()
		passed.Close()
		close(got)
		for fd := range got {
			syscall.Close(fd) // taken: the taker's to close
		}
		// Nothing queued stays open behind the reader's back.
		if left := len(r.fds); left != 0 {
			t.Fatalf("%d descriptors queued after Close", left)
		}
	}
}

// A descriptor that arrives after Close is closed at once, and Take has
// nothing to give.
func TestReaderClosesWhatComesAfterClose(t *testing.T) {
	a, b := fdpasstest.Pair(t)
	rc, err := b.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(rc)
	r.Close()
	passed, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer passed.Close()
	before := openFDs(t)
	if err := Write(a, []byte("x"), int(passed.Fd())); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	if fd := r.Take(); fd != -1 {
		t.Fatalf("Take after Close gave %d", fd)
	}
	if after := openFDs(t); after != before {
		t.Fatalf("%d descriptors open after the read, %d before: the copy that came was kept", after, before)
	}
}
