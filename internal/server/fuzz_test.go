package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"termkeep/internal/holder"
	"termkeep/internal/outlog"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
	"termkeep/internal/store"
	"termkeep/internal/testproc"
)

// safeHolderArg, as the test binary's first argument, makes it a holder
// that runs /bin/true whatever the spec asks: the fuzzer's bodies name
// commands, and no fuzzed command line is ever run.
const safeHolderArg = "__safe_holder"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == safeHolderArg {
		os.Exit(safeHolder())
	}
	// Holders are in sessions of their own: testproc ends those a killed
	// test binary leaves.
	os.Exit(testproc.Run(m))
}

func safeHolder() int {
	var spec holder.Spec
	if err := json.NewDecoder(os.Stdin).Decode(&spec); err != nil {
		json.NewEncoder(os.Stdout).Encode(holder.Ready{Error: "read spec: " + err.Error()})
		return 1
	}
	// "__cat" asks for a session that stays up, "__leaves" for one whose
	// child leaves a printer behind (a fuzzed command line never runs:
	// everything else is /bin/true).
	switch {
	case len(spec.Command) == 1 && spec.Command[0] == "__cat":
		spec.Command = []string{"/bin/cat"}
	case len(spec.Command) == 1 && spec.Command[0] == "__leaves":
		spec.Command = []string{"/bin/sh", "-c", "(trap '' HUP; while echo left-behind; do sleep 0.002; done) & sleep 0.3"}
	default:
		spec.Command = []string{"/bin/true"}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 1
	}
	json.NewEncoder(w).Encode(spec)
	w.Close()
	unix.Dup2(int(r.Fd()), 0)
	r.Close()
	return holder.Main()
}

// FuzzHTTPBodies feeds arbitrary bodies to every handler that decodes
// JSON, on both listeners of a real server: whatever the body, the answer
// is an answer (no 5xx) and nothing panics. `go test` runs the seeds; `go
// test -fuzz FuzzHTTPBodies` searches further.
func FuzzHTTPBodies(f *testing.F) {
	routes := []struct {
		method, path string
		tcp          bool
	}{
		{"POST", "/v1/sessions", false},
		{"POST", "/v1/sessions/old/restore", false},
		{"POST", "/v1/workspaces", false},
		{"POST", "/api/sessions", true},
		{"PATCH", "/api/sessions/old", true},
		{"POST", "/api/sessions/old/restore", true},
	}
	seeds := []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"name":`, `{"name":"ok","cwd":"/","command":["sh"]}`,
		`{"name":"a\u0000b","cwd":"/"}`, `{"name":"../../etc","cwd":"/"}`, `{"name":"x\ny"}`,
		`{"cwd":"/","cols":1001,"rows":24}`, `{"cwd":"/","cols":-1,"rows":1e9}`, `{"cwd":"relative"}`,
		`{"cwd":"/","env":["A B=1"]}`, `{"cwd":"/","set_env":["=x"]}`, `{"cwd":"/","env":["A=\u0000"]}`,
		`{"cwd":"/","workspace":"../w"}`, `{"cwd":"/","size_policy":"bogus"}`, `{"unknown":1}`,
		`{"name":"w1","dir":"/"}`, `{"name":"w1","dir":"/nonexistent"}`, `{"name":null}`, `{"name":""}`,
		`{"env":["A=1","B=2"]}`, `{"env":"notalist"}`, `{"name":"` + strings.Repeat("n", 70) + `"}`,
		`{"cwd":"/","command":[]}`, `{"cwd":"/","command":[""]}`, `{"cwd":"/","restore_command":"x","auto_restore":true}`,
	}
	for i := range routes {
		for _, s := range seeds {
			f.Add(uint8(i), []byte(s))
		}
	}
	// A body of 5,000 variables, and one larger than any body accepted.
	var many []string
	for i := 0; i < 5000; i++ {
		many = append(many, fmt.Sprintf("V%d=x", i))
	}
	b, _ := json.Marshal(map[string]any{"cwd": "/", "env": many})
	f.Add(uint8(0), b)
	f.Add(uint8(3), append([]byte(`{"cwd":"/","env":["A=`), bytes.Repeat([]byte("x"), 3<<20)...))

	ts := newLiveServer(f)
	// The harness reaches the end of the road: a good body starts a session.
	rec := httptest.NewRecorder()
	ts.srv.http.Handler.ServeHTTP(rec, httptest.NewRequest("POST", "http://termkeep/v1/sessions",
		strings.NewReader(`{"name":"sanity","cwd":"/","command":["sh"]}`)))
	if rec.Code != http.StatusCreated {
		f.Fatalf("create with a good body: %d %s", rec.Code, rec.Body.String())
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		rt := routes[int(route)%len(routes)]
		h := ts.srv.http.Handler
		req := httptest.NewRequest(rt.method, "http://termkeep"+rt.path, bytes.NewReader(body))
		if rt.tcp {
			h = ts.srv.gw.http.Handler
			req.Host = strings.TrimPrefix(ts.base, "http://")
			req.Header.Set("Authorization", "Bearer "+ts.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s with %.200q: %d %s", rt.method, rt.path, body, rec.Code, rec.Body.String())
		}
		if ct := rec.Header().Get("Content-Type"); rec.Code >= 400 && ct != "application/json" {
			t.Errorf("%s %s: a %d answer of type %q", rt.method, rt.path, rec.Code, ct)
		}
	})
}

// newLiveServer starts a server with one ended session, "old", whose
// holders are safe ones (safeHolder), and a TCP listener. A session made
// with the command ["__cat"] runs until it is killed.
func newLiveServer(tb testing.TB) *testServer { return newLiveServerWith(tb, nil) }

// newLiveServerWith is newLiveServer with tune changing the Config first
// (nil: none).
func newLiveServerWith(tb testing.TB, tune func(*Config)) *testServer {
	d, err := os.MkdirTemp("", "tkf")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(d) })
	dir := statedir.Dir(d)
	if err := dir.Ensure(); err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, dir.DB(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	old := endedSession("aaaaaaaa", "old")
	old.Owner = currentUser()
	if err := st.CreateSession(ctx, old); err != nil {
		tb.Fatal(err)
	}
	st.Close()
	l, err := outlog.Open(filepath.Join(dir.Session(old.ID), sessiondir.LogDir), outlog.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	l.Append([]byte("hello\r\n"))
	l.Close()
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	logs := &syncBuffer{}
	cfg := Config{
		StateDir: dir, HolderArgv: []string{self, safeHolderArg}, Listen: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(logs, nil)), KillGrace: time.Second,
	}
	if tune != nil {
		tune(&cfg)
	}
	srv, err := New(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	serveCtx, cancel := context.WithCancel(ctx)
	go func() { done <- srv.Serve(serveCtx) }()
	tb.Cleanup(func() {
		defer cancel()
		// Not Shutdown(true): the safe holders end by themselves, and
		// killing a holder that just ended would signal its pid, which
		// the machine may have given to another process meanwhile.
		srv.Shutdown(false)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			tb.Error("server did not stop")
		}
		metas, _ := filepath.Glob(filepath.Join(dir.SessionsDir(), "*", sessiondir.MetaFile))
		deadline := time.Now().Add(20 * time.Second)
		for _, p := range metas {
			for time.Now().Before(deadline) {
				if m, err := sessiondir.ReadMeta(filepath.Dir(p)); err != nil || m.EndedAt != nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		if strings.Contains(logs.String(), "panic") {
			tb.Errorf("server log:\n%s", logs.String())
		}
	})
	b, err := os.ReadFile(dir.URL())
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := os.ReadFile(dir.Token())
	if err != nil {
		tb.Fatal(err)
	}
	return &testServer{dir: dir, srv: srv, logs: logs, done: done, cancel: cancel,
		base: strings.TrimSuffix(strings.TrimSpace(string(b)), "/"), token: strings.TrimSpace(string(tok))}
}
