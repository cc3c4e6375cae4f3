package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/api"
	"termkeep/internal/store"
)

// serverGoroutines returns the goroutines alive now that the code of the
// server or its session hosts (not their tests) started, by their id,
// leaving out those in before.
func serverGoroutines(before map[string]bool) map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	found := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		id, _, _ := strings.Cut(strings.TrimPrefix(g, "goroutine "), " ")
		_, created, ok := strings.Cut(g, "\ncreated by ")
		if !ok || before[id] {
			continue
		}
		fn, loc, _ := strings.Cut(created, "\n")
		file, _, _ := strings.Cut(strings.TrimSpace(loc), ":")
		ours := strings.HasPrefix(fn, "termkeep/internal/server.") || strings.HasPrefix(fn, "termkeep/internal/session.")
		if ours && !strings.HasSuffix(file, "_test.go") {
			found[id] = g
		}
	}
	return found
}

// assertServerGoroutinesGone fails t if a goroutine the server started
// since before is still alive once the server has stopped. One that has
// been joined may still be on its way out (past its WaitGroup's Done), so
// the check yields and looks again for a moment; one that outlives the stop waits on
// something that never comes, and is still there.
func assertServerGoroutinesGone(t *testing.T, before map[string]bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := serverGoroutines(before)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, g := range left {
				t.Errorf("a goroutine the server started outlived its stop:\n%s", g)
			}
			return
		}
		runtime.Gosched()
	}
}

// assertStoppedClean waits for ts's Serve to return (leaving its result for
// newLiveServer's cleanup), then asserts that no goroutine the server
// started since before outlived it.
func (ts *testServer) assertStoppedClean(t *testing.T, before map[string]bool) {
	t.Helper()
	select {
	case err := <-ts.done:
		ts.done <- err
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop")
	}
	assertServerGoroutinesGone(t, before)
}

// serverGoroutineIDs returns the ids of serverGoroutines alive now, for a
// later assertServerGoroutinesGone to leave out.
func serverGoroutineIDs() map[string]bool {
	ids := map[string]bool{}
	for id := range serverGoroutines(nil) {
		ids[id] = true
	}
	return ids
}

// Every goroutine the server starts is joined before Serve returns, when
// it is stopped by its context as when by Shutdown: none can act on the
// registry once it is closed. The server here warms an ended session's
// screen, watches a running agent's conversation, serves both listeners,
// watches for quiet sessions and runs its pruner.
func TestServerJoinsItsGoroutines(t *testing.T) {
	for _, how := range []string{"context", "shutdown"} {
		t.Run(how, func(t *testing.T) {
			before := serverGoroutineIDs()
			ts := newLiveServer(t)
			rec := httptest.NewRecorder()
			ts.srv.http.Handler.ServeHTTP(rec, httptest.NewRequest("POST", "http://termkeep/v1/sessions",
				strings.NewReader(`{"name":"agent","cwd":"/","command":["__cat"]}`)))
			if rec.Code != http.StatusCreated {
				t.Fatalf("create: %d %s", rec.Code, rec.Body.String())
			}
			var made api.Session
			if err := json.Unmarshal(rec.Body.Bytes(), &made); err != nil || made.Pid == nil {
				t.Fatalf("create: %s (%v)", rec.Body.String(), err)
			}
			// As if the session ran codex: its conversation is looked for
			// while it runs.
			h := ts.srv.host(made.ID)
			ts.srv.watchConversation(store.Session{ID: made.ID, Agent: "codex", Command: []string{"codex"}}, h)
			if len(serverGoroutines(before)) == 0 {
				t.Fatal("the check sees no goroutine of the server's")
			}

			if how == "context" {
				ts.cancel()
			} else {
				ts.srv.Shutdown(false)
			}
			ts.assertStoppedClean(t, before)
			unix.Kill(*made.Pid, unix.SIGTERM) // the holder records the end newLiveServer's cleanup waits for
		})
	}
}
