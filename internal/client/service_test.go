package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"termkeep/internal/statedir"
)

// Where the installed service runs the state directory's server, a client
// that finds none asks the service manager to start it and never starts a
// second one of its own, which would hold the lock against the unit's; it
// starts its own only when the service manager cannot be asked.
func TestEnsureServerThroughService(t *testing.T) {
	const ownStart = `echo own-start-ran; echo 'termkeep: the own server failed' >&2; exit 1`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	newDir := func(t *testing.T) statedir.Dir {
		dir := statedir.Dir(t.TempDir())
		if err := dir.Ensure(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	ranOwn := func(dir statedir.Dir) bool {
		b, _ := os.ReadFile(dir.ServerLog())
		return strings.Contains(string(b), "own-start-ran")
	}

	t.Run("the service starts it", func(t *testing.T) {
		dir := newDir(t)
		c := New(dir)
		calls := 0
		c.ServiceStart = func(context.Context) error {
			calls++
			l, err := net.Listen("unix", dir.Socket())
			if err != nil {
				return err
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{}`))
			})}
			go srv.Serve(l)
			t.Cleanup(func() { srv.Close() })
			return nil
		}
		if err := c.EnsureServer(ctx, []string{"/bin/sh", "-c", ownStart}); err != nil {
			t.Fatalf("EnsureServer: %v", err)
		}
		if calls != 1 || ranOwn(dir) {
			t.Errorf("service asked %d times (want 1), own server started: %v (want not)", calls, ranOwn(dir))
		}
	})

	t.Run("the service manager cannot be asked", func(t *testing.T) {
		dir := newDir(t)
		c := New(dir)
		c.ServiceStart = func(context.Context) error { return errors.New("Failed to connect to bus: No medium found") }
		err := c.EnsureServer(ctx, []string{"/bin/sh", "-c", ownStart})
		if err == nil || !strings.Contains(err.Error(), "the own server failed") {
			t.Errorf("EnsureServer = %v, want the own server's failure (it is started instead)", err)
		}
		b, _ := os.ReadFile(dir.ServerLog())
		if !ranOwn(dir) || !strings.Contains(string(b), "No medium found") {
			t.Errorf("server.log does not show the own start and why:\n%s", b)
		}
	})

	t.Run("the service's server never answers", func(t *testing.T) {
		dir := newDir(t)
		c := New(dir)
		c.serviceWait = 200 * time.Millisecond
		c.ServiceStart = func(context.Context) error { return nil }
		err := c.EnsureServer(ctx, []string{"/bin/sh", "-c", ownStart})
		if err == nil || !strings.Contains(err.Error(), "journalctl --user -u termkeep") {
			t.Errorf("EnsureServer = %v, want where to look", err)
		}
		if ranOwn(dir) {
			t.Error("a server of its own was started beside the service's")
		}
	})
}
