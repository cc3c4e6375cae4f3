package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// EnsureServer makes sure a server answers on the socket, starting one in
// the background with argv (the termkeep binary and its serve arguments)
// when none does. The started server runs detached (setsid), its standard
// streams closed and its output appended to the state directory's
// server.log. A lock file serialises concurrent callers, so two clients
// starting at once start one server.
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
	logf, err := os.OpenFile(c.dir.ServerLog(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("client: open server log: %w", err)
	}
	defer logf.Close()
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
			return fmt.Errorf("the termkeep server exited at start (%v); see %s", err, c.dir.ServerLog())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("the termkeep server did not answer within 15s; see %s", c.dir.ServerLog())
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
