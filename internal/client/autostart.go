package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// EnsureServer makes sure a server answers on the socket, starting one in
// the background with argv (the termkeep binary and its serve arguments)
// when none does. The started server runs detached (setsid), its standard
// streams closed and its output appended to the state directory's
// server.log. A lock file serialises concurrent callers, so two clients
// starting at once start one server. A server that exits at start is
// reported by the sentence it printed last in server.log during this
// attempt (why it could not start), then the log's path. Where the
// installed service runs this state directory's server (ServiceStart),
// the service manager starts it instead.
func (c *Client) EnsureServer(ctx context.Context, argv []string) error {
	if _, err := c.Health(ctx); err == nil {
		return nil
	} else if !errors.Is(err, ErrNoServer) {
		return err
	}
	if err := c.dir.Ensure(); err != nil {
		return err
	}
	lock, err := os.OpenFile(c.dir.StartLock(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("client: open start lock: %w", err)
	}
	defer lock.Close()
	if err := flockCtx(ctx, lock); err != nil {
		return err
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	// Someone else may have started it while we waited for the lock.
	if _, err := c.Health(ctx); err == nil {
		return nil
	}
	var serviceErr error
	if c.ServiceStart != nil {
		if serviceErr = c.ServiceStart(ctx); serviceErr == nil {
			return c.awaitService(ctx)
		}
	}
	logf, err := os.OpenFile(c.dir.ServerLog(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("client: open server log: %w", err)
	}
	defer logf.Close()
	if serviceErr != nil {
		fmt.Fprintf(logf, "the service could not be asked to start the server (%v): a client starts it outside the service\n", serviceErr)
	}
	// What this start writes is what follows: why it failed, if it does.
	var logStart int64
	if st, err := logf.Stat(); err == nil {
		logStart = st.Size()
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = nil
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("client: start server: %w", err)
	}

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := c.Health(ctx); err == nil {
			return nil
		}
		select {
		case err := <-exited:
			if why := startError(c.dir.ServerLog(), logStart); why != "" {
				return fmt.Errorf("the termkeep server did not start: %s (its log: %s)", why, c.dir.ServerLog())
			}
			return fmt.Errorf("the termkeep server exited at start (%v); see %s", err, c.dir.ServerLog())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("the termkeep server did not answer within 15s; see %s", c.dir.ServerLog())
}

// awaitService waits for the server the service manager started: a
// second server started here would only hold the state directory's lock
// against it.
func (c *Client) awaitService(ctx context.Context) error {
	wait := c.serviceWait
	if wait == 0 {
		wait = 15 * time.Second
	}
	deadline := time.Now().Add(wait)
	for {
		if _, err := c.Health(ctx); err == nil {
			return nil
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("the termkeep service started but its server did not answer within %v: `termkeep service status` and the service's log (journalctl --user -u termkeep) say why", wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// fatalPrefix starts the line `termkeep serve` prints on stderr when it
// fails (cmd/termkeep's run): "termkeep: " and a sentence.
const fatalPrefix = "termkeep: "

// startLogMax bounds how much of a failed start's output is read: the
// sentence is on its last lines.
const startLogMax = 64 << 10

// startError returns the sentence a server that failed to start gave, from
// what it appended to the log at path from offset from on: its last line
// starting with "termkeep: ", without the prefix. "" when there is none
// (it was killed, or crashed).
func startError(path string, from int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() <= from {
		return ""
	}
	from = max(from, st.Size()-startLogMax)
	b := make([]byte, st.Size()-from)
	n, _ := f.ReadAt(b, from)
	lines := strings.Split(string(b[:n]), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if msg, ok := strings.CutPrefix(strings.TrimRight(lines[i], "\r"), fatalPrefix); ok && strings.TrimSpace(msg) != "" {
			return strings.TrimSpace(msg)
		}
	}
	return ""
}

func flockCtx(ctx context.Context, f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("client: lock: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
