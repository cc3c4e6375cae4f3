package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
	"termkeep/internal/wire"
)

// The counters move with what happens: a session created, a viewer of
// each kind, input and output, a kill; /metrics on the browser listener
// needs a token that sees every session.
func TestMetricsCountersMove(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	w := e2e.NewWebEnv(t)
	e := w.Env
	m0 := e.Metrics()
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "termkeep_build_info",
		"termkeep_log_disk_bytes", "termkeep_registry_write_duration_seconds", "termkeep_holder_reconnects_total",
		"termkeep_viewer_resyncs_total", "termkeep_sessions_restored_total"} {
		if _, ok := m0[name]; !ok {
			t.Errorf("no %s in /metrics", name)
		}
	}
	if v := m0.Value(t, "termkeep_sessions", "state", "running"); v != 0 {
		t.Fatalf("running sessions at start = %v", v)
	}

	e.MustTk("new", "--name", "m", "--", "cat")
	if v := e2e.OpenViewer(t, e, "m", wire.Hello{From: wire.FromSnapshot, Cols: 80, Rows: 24}); v.S.Welcome.Session == "" {
		t.Fatal("attach: no welcome")
	}
	e.MustTk("send", "m", "metrics-said-hello")
	if _, errs, code := e.Tk("wait", "m", "--from", "start", "--output", "metrics-said-hello\r\nmetrics-said-hello", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait for cat's echo: %d %s", code, errs)
	}

	var m1 e2e.Scrape
	e2e.WaitFor(t, 10*time.Second, "one cli viewer in /metrics", func() bool {
		m1 = e.Metrics()
		return m1.Value(t, "termkeep_viewers", "kind", "cli") == 1
	})
	if got := m1.Value(t, "termkeep_sessions", "state", "running"); got != 1 {
		t.Errorf("termkeep_sessions{state=running} = %v, want 1", got)
	}
	if got := m1.Value(t, "termkeep_viewers", "kind", "web"); got != 0 {
		t.Errorf("termkeep_viewers{kind=web} = %v, want 0", got)
	}
	if d := m1.Value(t, "termkeep_sessions_created_total") - m0.Value(t, "termkeep_sessions_created_total"); d != 1 {
		t.Errorf("termkeep_sessions_created_total moved by %v, want 1", d)
	}
	in0, in1 := m0.Value(t, "termkeep_input_bytes_total"), m1.Value(t, "termkeep_input_bytes_total")
	if in1-in0 < float64(len("metrics-said-hello\r")) {
		t.Errorf("termkeep_input_bytes_total went from %v to %v after sending %d bytes", in0, in1, len("metrics-said-hello\r"))
	}
	out0, out1 := m0.Value(t, "termkeep_output_bytes_total"), m1.Value(t, "termkeep_output_bytes_total")
	if out1-out0 < float64(2*len("metrics-said-hello")) {
		t.Errorf("termkeep_output_bytes_total went from %v to %v; the echo and cat's copy are %d bytes", out0, out1, 2*len("metrics-said-hello"))
	}
	if m1.Value(t, "termkeep_registry_write_duration_seconds", "op", "event") == 0 {
		t.Error("no registry write timed for the events")
	}

	// A browser is a web viewer.
	ws := w.DialViewer("/ws/sessions/m")
	ws.Until("welcome", e2e.IsType(wire.TypeWelcome))
	e2e.WaitFor(t, 10*time.Second, "one web viewer in /metrics", func() bool {
		return e.Metrics().Value(t, "termkeep_viewers", "kind", "web") == 1
	})

	// The log's disk use is counted (within the cache's 10 seconds).
	e2e.WaitFor(t, 15*time.Second, "the log's disk use in /metrics", func() bool {
		return e.Metrics().Value(t, "termkeep_log_disk_bytes") > 0
	})

	// Kill: one more ended, as closed.
	e.MustTk("kill", "m")
	m2 := e.Metrics()
	if d := m2.Value(t, "termkeep_sessions_ended_total", "state", "closed") - m1.Value(t, "termkeep_sessions_ended_total", "state", "closed"); d != 1 {
		t.Errorf("termkeep_sessions_ended_total{state=closed} moved by %v, want 1", d)
	}
	if got := m2.Value(t, "termkeep_sessions", "state", "running"); got != 0 {
		t.Errorf("after kill termkeep_sessions{state=running} = %v", got)
	}
	if got := m2.Value(t, "termkeep_sessions", "state", "closed"); got != 1 {
		t.Errorf("after kill termkeep_sessions{state=closed} = %v", got)
	}

	// The browser listener: no token is 401; the owner token, or a token
	// of the owner's user with no narrower scope, reads it; a token
	// narrowed to a session may not (the figures are the whole server's).
	if code, body := w.Do("GET", "/metrics", "", nil); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics on TCP without a token: %d %s", code, body)
	}
	if code, body := w.Do("GET", "/metrics", e2e.Bearer("not-a-token"), nil); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics on TCP with a wrong token: %d %s", code, body)
	}
	code, body := w.Do("GET", "/metrics", e2e.Bearer(w.Token), nil)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics on TCP with the owner token: %d %s", code, body)
	}
	if got := e2e.ParseMetrics(t, body).Value(t, "termkeep_sessions", "state", "closed"); got != 1 {
		t.Errorf("over TCP termkeep_sessions{state=closed} = %v", got)
	}
	scraper := w.NewToken("--read-only", "--name", "metrics")
	if code, body := w.Do("GET", "/metrics", e2e.Bearer(scraper.Secret), nil); code != http.StatusOK {
		t.Errorf("GET /metrics with a read-only token of the owner: %d %s", code, body)
	}
	narrow := w.NewToken("--session", "m", "--read-only")
	if code, body := w.Do("GET", "/metrics", e2e.Bearer(narrow.Secret), nil); code != http.StatusForbidden {
		t.Errorf("GET /metrics with a session's token: %d %s", code, body)
	}
}

// /healthz and /readyz answer on both listeners, with no token on TCP.
func TestHealthAndReadiness(t *testing.T) {
	w := e2e.NewWebEnv(t)
	e := w.Env
	e2e.WaitFor(t, 20*time.Second, "/readyz on the unix socket", func() bool {
		code, _ := e.UnixGet("/readyz")
		return code == http.StatusOK
	})
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := e.UnixGet(path); code != http.StatusOK || string(body) != "ok\n" {
			t.Errorf("GET %s on the unix socket: %d %q", path, code, body)
		}
		code, body := w.Do("GET", path, "", nil)
		if code != http.StatusOK || string(body) != "ok\n" {
			t.Errorf("GET %s on TCP without a token: %d %q", path, code, body)
		}
		// Still behind the other fences' neighbours: a POST is refused.
		if code, _ := w.Do("POST", path, "", nil); code != http.StatusMethodNotAllowed {
			t.Errorf("POST %s on TCP: %d", path, code)
		}
	}
	// The probes open no other door: the API still wants the token.
	if code, _ := w.Do("GET", "/api/stats", "", nil); code != http.StatusUnauthorized {
		t.Errorf("GET /api/stats on TCP without a token: %d", code)
	}
}

// `termkeep stats --json` lists each session with its traffic; the table
// names it too; a user's token sees only its own sessions in /api/stats.
func TestStatsCommand(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	w := e2e.NewWebEnv(t)
	e := w.Env
	id := strings.TrimSpace(e.MustTk("new", "--name", "st", "--", "cat"))
	e.MustTk("send", "st", "stats-input")
	if _, errs, code := e.Tk("wait", "st", "--from", "start", "--output", "stats-input\r\nstats-input", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %d %s", code, errs)
	}
	var st api.Stats
	out := e.MustTk("stats", "--json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("stats --json printed %q: %v", out, err)
	}
	if st.Version == "" || st.Pid <= 0 || st.UptimeSeconds < 0 || st.StartedAt.IsZero() {
		t.Errorf("server figures: %+v", st)
	}
	if len(st.Sessions) != 1 {
		t.Fatalf("stats lists %d sessions: %s", len(st.Sessions), out)
	}
	s := st.Sessions[0]
	if s.ID != id || s.Name != "st" || s.State != "running" || s.BytesOut == 0 || s.BytesIn < uint64(len("stats-input\r")) ||
		s.LastActivity.IsZero() || s.UptimeSeconds < 0 || s.CreatedAt.IsZero() {
		t.Errorf("session figures: %+v", s)
	}
	table := e.MustTk("stats")
	if !strings.Contains(table, "termkeep ") || !strings.Contains(table, id) || !strings.Contains(table, "st") || !strings.Contains(table, "OUT") {
		t.Errorf("stats table:\n%s", table)
	}

	// Over TCP the same answer, narrowed to what the token sees.
	var viaTCP api.Stats
	w.API("GET", "/api/stats", nil, 200, &viaTCP)
	if len(viaTCP.Sessions) != 1 || viaTCP.Sessions[0].ID != id {
		t.Errorf("/api/stats with the owner token: %+v", viaTCP)
	}
	e.MustTk("user", "add", "alice")
	alice := w.NewToken("--user", "alice")
	var asAlice api.Stats
	w.As(alice.Secret).API("GET", "/api/stats", nil, 200, &asAlice)
	if len(asAlice.Sessions) != 0 {
		t.Errorf("alice's token sees %+v in /api/stats", asAlice.Sessions)
	}
}

// serve --log-format json writes one JSON object a line on stderr, with a
// line for each lifecycle event and the same keys throughout.
func TestMetricsJSONLogs(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	logPath := filepath.Join(e.Dir, "json.log")
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(e2e.TkBin, "serve", "--state-dir", e.Dir, "--kill-grace", "1s", "--listen", "off", "--log-format", "json", "--log-level", "info")
	cmd.Stdout, cmd.Stderr = io.Discard, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logf.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
	})
	e2e.WaitFor(t, 20*time.Second, "the server to answer", func() bool {
		_, err := e.C.Health(context.Background())
		return err == nil
	})

	id := strings.TrimSpace(e.MustTk("new", "--name", "lg", "--", "cat"))
	v := e2e.OpenViewer(t, e, "lg", wire.Hello{From: wire.FromSnapshot})
	v.S.Close()
	e.MustTk("kill", "lg")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.C.Shutdown(ctx, false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not stop")
	}

	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("a log line is not JSON: %q: %v\nlog:\n%s", sc.Text(), err, b)
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := l[k]; !ok {
				t.Errorf("log line without %q: %s", k, sc.Text())
			}
		}
		lines = append(lines, l)
	}
	find := func(msg string, want map[string]any) {
		t.Helper()
		for _, l := range lines {
			if l["msg"] != msg {
				continue
			}
			ok := true
			for k, v := range want {
				if v == nil {
					_, has := l[k]
					ok = ok && has
				} else {
					ok = ok && fmt.Sprint(l[k]) == fmt.Sprint(v)
				}
			}
			if ok {
				return
			}
		}
		t.Errorf("no log line %q with %v in:\n%s", msg, want, b)
	}
	find("server started", map[string]any{"version": nil, "pid": nil, "state_dir": e.Dir})
	find("session created", map[string]any{"session": id, "name": "lg", "pid": nil})
	find("holder connected", map[string]any{"session": id, "pid": nil})
	find("viewer attached", map[string]any{"session": id, "name": "lg", "viewer": nil, "kind": "cli", "mode": "control"})
	find("viewer detached", map[string]any{"session": id, "name": "lg", "viewer": nil, "kind": "cli"})
	find("session ended", map[string]any{"session": id, "name": "lg", "state": "closed", "exit_code": nil})
	find("server stopping", map[string]any{"end_sessions": false})
}
