package cli

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"termkeep/internal/e2e"
)

// A terminal that goes away without a SIGHUP: attach was started on a pty
// that is not its controlling terminal (a program that runs it on a pty of
// its own, an emulator that crashed), and the pty's other side closes.
// Reads and writes then fail with EIO; attach must end and leave the
// session's viewers, not stay on as a viewer nobody sees, reconnecting on
// every output.
func TestAttachEndsWhenItsTerminalGoes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flood bool // output is flowing when the terminal goes
	}{{"idle", false}, {"output", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := e2e.NewEnv(t)
			e.StartServer()
			e.MustTk("new", "--name", "h", "--", "sh")
			master, tty, err := pty.Open()
			if err != nil {
				t.Fatal(err)
			}
			pty.Setsize(master, &pty.Winsize{Cols: 80, Rows: 24})
			cmd := exec.Command(e2e.TkBin, "--state-dir", e.Dir, "--no-autostart", "attach", "h")
			cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal: no SIGHUP
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			t.Cleanup(func() { cmd.Process.Kill() })
			// A terminal that reads until it is closed. It polls, so that
			// no read is in progress at the close, which would hold the
			// master open until the read returns.
			closing := make(chan struct{})
			reading := make(chan struct{})
			go func() {
				defer close(reading)
				buf := make([]byte, 32<<10)
				fds := []unix.PollFd{{Fd: int32(master.Fd()), Events: unix.POLLIN}}
				for {
					select {
					case <-closing:
						return
					default:
					}
					if n, _ := unix.Poll(fds, 20); n > 0 {
						if _, err := unix.Read(int(fds[0].Fd), buf); err != nil && err != unix.EINTR && err != unix.EAGAIN {
							return
						}
					}
				}
			}()
			e2e.WaitFor(t, 20*time.Second, "attach to join", func() bool { return e.Session("h").Viewers == 1 })
			if tc.flood {
				e.MustTk("send", "h", "while :; do echo flowing; sleep 0.01; done")
				time.Sleep(200 * time.Millisecond)
			}
			close(closing)
			<-reading
			master.Close()
			select {
			case <-exited:
			case <-time.After(20 * time.Second):
				t.Fatal("attach did not end when its terminal went away")
			}
			e2e.WaitFor(t, 20*time.Second, "the server to drop attach's viewer", func() bool { return e.Session("h").Viewers == 0 })
			if s := e.Session("h"); s.State != "running" {
				t.Fatalf("the session is %s after its terminal went: want running", s.State)
			}
		})
	}
}
