package attach

import (
	"bytes"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"golang.org/x/sys/unix"
)

// openTerminal opens the terminal again as a non-blocking file of its own,
// leaves the flags of the file it was given as they were, and reads and
// writes the same terminal; it declines when stdin and stdout are not one
// terminal.
func TestOpenTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()

	fd := openTerminal(tty, tty)
	if fd < 0 {
		t.Fatal("openTerminal declined a terminal given as stdin and stdout")
	}
	term, err := newRawTerm(fd)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	nonblock := func(fd uintptr) bool {
		fl, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		if e != 0 {
			t.Fatal(e)
		}
		return fl&syscall.O_NONBLOCK != 0
	}
	if fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); fl&unix.FD_CLOEXEC == 0 {
		t.Error("attach's descriptor of the terminal is inherited by children")
	}
	if !nonblock(uintptr(fd)) {
		t.Error("attach's file of the terminal is blocking")
	}
	if nonblock(tty.Fd()) {
		t.Error("opening the terminal again made the shell's file non-blocking")
	}

	// Output written to it reaches the terminal; keys typed there come out.
	if _, err := term.Write([]byte("shown")); err != nil {
		t.Fatal(err)
	}
	ptmx.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, 64)
	n, err := ptmx.Read(got)
	if err != nil || !bytes.Contains(got[:n], []byte("shown")) {
		t.Fatalf("the terminal showed %q (%v), want the output", got[:n], err)
	}
	if _, err := ptmx.Write([]byte("typed\n")); err != nil {
		t.Fatal(err)
	}
	n, err = term.Read(got)
	if err != nil || !bytes.HasPrefix(got[:n], []byte("typed")) {
		t.Fatalf("read %q (%v) from the terminal, want the keys typed", got[:n], err)
	}

	other, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if fd := openTerminal(tty, other); fd >= 0 {
		unix.Close(fd)
		t.Error("openTerminal accepted stdout that is not the terminal")
	}
	if fd := openTerminal(other, other); fd >= 0 {
		unix.Close(fd)
		t.Error("openTerminal accepted a regular file")
	}
}
