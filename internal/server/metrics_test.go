package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
	"termkeep/internal/store"
)

func TestMetricsSeesAll(t *testing.T) {
	me := currentUser()
	for _, c := range []struct {
		name string
		p    principal
		want bool
	}{
		{"owner", principal{owner: true, user: me}, true},
		{"owner's user, read-only", principal{user: me, readOnly: true, tokenID: "t"}, true},
		{"owner's user, one session", principal{user: me, session: "a1", tokenID: "t"}, false},
		{"owner's user, one workspace", principal{user: me, workspace: "w", tokenID: "t"}, false},
		{"another user", principal{user: me + "-not", tokenID: "t"}, false},
		{"no one", principal{}, false},
	} {
		if got := c.p.seesAll(); got != c.want {
			t.Errorf("%s: seesAll = %v, want %v", c.name, got, c.want)
		}
	}
}

// The log's disk use is the sum of the segment files, walked at most every
// diskEvery.
func TestMetricsDiskUsageCached(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1000, 0)
	d := diskUsage{dir: dir, now: func() time.Time { return now }}
	write := func(id, name string, n int) {
		t.Helper()
		p := filepath.Join(dir, id, sessiondir.LogDir)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, name), []byte(strings.Repeat("x", n)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a", "00000000000000000000.seg", 100)
	write("a", "00000000000000000100.seg", 50)
	write("a", "not-a-segment", 1000)
	write("b", "00000000000000000000.seg", 7)
	per, total := d.get()
	if total != 157 || per["a"] != 150 || per["b"] != 7 {
		t.Fatalf("disk use %v, total %d; want a=150 b=7, 157", per, total)
	}
	write("b", "00000000000000000007.seg", 3)
	now = now.Add(diskEvery - time.Second)
	if _, total := d.get(); total != 157 {
		t.Errorf("within %s the figure was walked again: %d", diskEvery, total)
	}
	now = now.Add(time.Second)
	if per, total := d.get(); total != 160 || per["b"] != 10 {
		t.Errorf("after %s: %v, total %d; want b=10, 160", diskEvery, per, total)
	}
}

// /readyz is 503 with the reason while the server starts, after a failed
// registry write (until one works), and once it stops; /healthz is 200
// throughout; the listener's probes answer before anything else.
func TestHealthReadiness(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "termkeep.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := &Server{
		cfg:   Config{StateDir: statedir.Dir(t.TempDir()), Version: "test", Now: time.Now},
		log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		store: st, done: make(chan struct{}),
	}
	s.metrics = newMetrics(s)
	guarded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot) // stands for the guard
	})
	h := s.probes(guarded)
	get := func(method, path string) (int, string) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec.Code, rec.Body.String()
	}
	expect := func(path string, code int, body string) {
		t.Helper()
		gotCode, got := get("GET", path)
		if gotCode != code || !strings.Contains(got, body) {
			t.Errorf("GET %s: %d %q, want %d with %q", path, gotCode, got, code, body)
		}
	}
	expect("/healthz", 200, "ok")
	expect("/readyz", 503, "not ready: starting")
	s.startupDone.Store(true)
	expect("/readyz", 200, "ok")

	s.metrics.observeWrite("event", time.Now(), fmt.Errorf("store: add event: %w", errors.New("disk I/O error")))
	expect("/readyz", 503, "the registry cannot be written: store: add event: disk I/O error")
	expect("/healthz", 200, "ok")
	s.metrics.observeWrite("event", time.Now(), nil)
	expect("/readyz", 200, "ok")
	// A write abandoned by its caller says nothing about the registry.
	s.metrics.observeWrite("cwd", time.Now(), fmt.Errorf("store: set cwd: %w", context.Canceled))
	expect("/readyz", 200, "ok")
	// Nor does a write about a session removed meanwhile.
	s.metrics.observeWrite("end", time.Now(), fmt.Errorf("store: end session x: %w", store.ErrNotFound))
	expect("/readyz", 200, "ok")

	if code, _ := get("POST", "/readyz"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /readyz: %d", code)
	}
	if code, _ := get("HEAD", "/healthz"); code != 200 {
		t.Errorf("HEAD /healthz: %d", code)
	}
	expect("/metrics", http.StatusTeapot, "")
	expect("/healthz/x", http.StatusTeapot, "")

	// The listener's probe, which anyone may ask, names no server path;
	// the unix socket's (the owner's) does.
	db := filepath.Join(s.cfg.StateDir.String(), "termkeep.db")
	s.metrics.observeWrite("event", time.Now(), fmt.Errorf("store: add event: the registry %s is read-only", db))
	if code, got := get("GET", "/readyz"); code != 503 || strings.Contains(got, s.cfg.StateDir.String()) || !strings.Contains(got, "read-only") {
		t.Errorf("the listener's /readyz: %d %q; want 503 without the state directory", code, got)
	}
	rec := httptest.NewRecorder()
	s.handleReadyz(rec, httptest.NewRequest("GET", "/readyz", nil))
	if !strings.Contains(rec.Body.String(), db) {
		t.Errorf("the owner's /readyz lost the path: %q", rec.Body.String())
	}
	s.metrics.observeWrite("event", time.Now(), nil)

	close(s.done)
	expect("/readyz", 503, "stopping")
}
