package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/api"
	"termkeep/internal/sessiondir"
	"termkeep/internal/store"
)

// A server stopping while its sessions' children end records every end
// with its event, and never reaches for a holder again once it stops:
// half the children are ended at the moment the server is told to stop,
// the other half after it has stopped (the next server records those).
// Across both servers each session has exactly one end event, and
// neither server logs a write to a closed registry or a reconnection
// after "server stopping".
func TestStoppingServerRecordsEveryEnd(t *testing.T) {
	before := serverGoroutineIDs()
	ts := newLiveServer(t)
	const n = 8
	ids := make([]string, n)
	pids := make([]int, n)
	for i := range n {
		rec := httptest.NewRecorder()
		ts.srv.http.Handler.ServeHTTP(rec, httptest.NewRequest("POST", "http://termkeep/v1/sessions",
			strings.NewReader(fmt.Sprintf(`{"name":"s%d","cwd":"/","command":["__cat"]}`, i))))
		if rec.Code != http.StatusCreated {
			t.Fatalf("create: %d %s", rec.Code, rec.Body.String())
		}
		var made api.Session
		if err := json.Unmarshal(rec.Body.Bytes(), &made); err != nil || made.Pid == nil {
			t.Fatalf("create: %s (%v)", rec.Body.String(), err)
		}
		ids[i], pids[i] = made.ID, *made.Pid
	}

	ts.srv.Shutdown(false)
	for _, pid := range pids[:n/2] {
		unix.Kill(pid, unix.SIGTERM)
	}
	// No host is left reading to act on the ends that come next.
	ts.assertStoppedClean(t, before)
	for _, pid := range pids[n/2:] {
		unix.Kill(pid, unix.SIGTERM)
	}
	waitEnded := func(id string) {
		deadline := time.Now().Add(20 * time.Second)
		for {
			m, err := sessiondir.ReadMeta(ts.dir.Session(id))
			if err == nil && m.EndedAt != nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("session %s: its holder recorded no end (meta %+v, %v)", id, m, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, id := range ids {
		waitEnded(id)
	}
	logs := ts.logs.String()
	_, afterStop, _ := strings.Cut(logs, "server stopping")
	for _, bad := range []string{"database is closed", "record session end", "holder reconnected", "holder connected"} {
		if strings.Contains(afterStop, bad) {
			t.Errorf("after it began to stop, the server logged %q:\n%s", bad, afterStop)
		}
	}

	// The next server records the ends the first one did not see.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logs2 := &syncBuffer{}
	srv, err := New(context.Background(), Config{
		StateDir: ts.dir, HolderArgv: []string{self, safeHolderArg},
		Logger: slog.New(slog.NewTextHandler(logs2, nil)), KillGrace: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	events, err := srv.store.Events(context.Background(), 0, 0)
	srv.Shutdown(false)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	ends := map[string][]string{}
	for _, e := range events {
		switch e.Kind {
		case store.EventProcessExited, store.EventSessionClosed, store.EventSessionInterrupted:
			ends[e.Session] = append(ends[e.Session], e.Kind)
		}
	}
	for i, id := range ids {
		if len(ends[id]) != 1 {
			t.Errorf("session %s (child ended %s): end events %v, want exactly one", id,
				map[bool]string{true: "as the server was told to stop", false: "after it stopped"}[i < n/2], ends[id])
		}
	}
	if strings.Contains(logs2.String(), "database is closed") {
		t.Errorf("the second server:\n%s", logs2.String())
	}
	if t.Failed() {
		t.Logf("first server's log:\n%s", logs)
	}
}
