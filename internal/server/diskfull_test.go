package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/store"
)

// A session whose end the registry refuses for a full disk is shown
// ended meanwhile and recorded once the disk takes writes again: the
// registry refuses every write with ENOSPC (store.FailWrites) while a
// real holder's cat ends. TestEndRecordedAfterDiskFull (internal/e2e)
// does the same on a real full tmpfs when it can mount one.
func TestEndRetriedAfterFullDisk(t *testing.T) {
	ts := newLiveServer(t)
	ts.srv.endRetry = endRetry{max: 200 * time.Millisecond}
	do := func(method, path, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		ts.srv.http.Handler.ServeHTTP(rec, httptest.NewRequest(method, "http://termkeep"+path, strings.NewReader(body)))
		return rec
	}
	rec := do("POST", "/v1/sessions", `{"cwd":"/","command":["__cat"]}`)
	var made api.Session
	if err := json.Unmarshal(rec.Body.Bytes(), &made); rec.Code != http.StatusCreated || err != nil {
		t.Fatalf("create: %d %s", rec.Code, rec.Body.String())
	}
	get := func() api.Session {
		var s api.Session
		json.Unmarshal(do("GET", "/v1/sessions/"+made.ID, "").Body.Bytes(), &s)
		return s
	}

	ts.srv.store.FailWrites(syscall.ENOSPC)
	if rec := do("POST", "/v1/sessions/"+made.ID+"/input", "\x04"); rec.Code != http.StatusNoContent {
		t.Fatalf("input: %d %s", rec.Code, rec.Body.String())
	}
	waitFor(t, 20*time.Second, "the refused end to be shown", func() bool { return get().State == "exited" })
	if s := get(); s.ExitCode == nil || *s.ExitCode != 0 || s.Pid != nil || s.EndedAt == nil {
		t.Fatalf("while the disk is full: %+v", s)
	}
	ctx := context.Background()
	if row, _ := ts.srv.store.Session(ctx, made.ID); row.State != store.StateRunning {
		t.Fatalf("the registry took the end on a full disk: %s", row.State)
	}
	ts.srv.store.FailWrites(nil)
	waitFor(t, 5*time.Second, "the registry to take the end", func() bool {
		row, _ := ts.srv.store.Session(ctx, made.ID)
		return row.State == store.StateExited
	})
	// The server says so once the write returns.
	waitFor(t, 5*time.Second, "the server to log the end it wrote again", func() bool {
		return strings.Contains(ts.logs.String(), "recorded a session end the registry had refused")
	})
}

// waitFor polls cond every 20 ms until it holds (the registry has no
// signal to wait on), failing the test with what after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
	}
}
