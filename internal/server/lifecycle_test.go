package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/sessiondir"
)

// listenerAPI is one of the server's two HTTP APIs, reached over its own
// socket: the CLI's on server.sock (/v1), the browser's on TCP (/api).
type listenerAPI struct {
	name   string
	prefix string
	do     func(method, path string, body any) (int, []byte)
}

func bothAPIs(t *testing.T, ts *testServer) []listenerAPI {
	unix := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", ts.dir.Socket())
		},
	}}
	t.Cleanup(unix.CloseIdleConnections)
	send := func(c *http.Client, base, token string) func(string, string, any) (int, []byte) {
		return func(method, path string, body any) (int, []byte) {
			t.Helper()
			var rd io.Reader
			if body != nil {
				b, _ := json.Marshal(body)
				rd = bytes.NewReader(b)
			}
			req, err := http.NewRequest(method, base+path, rd)
			if err != nil {
				t.Fatal(err)
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, b
		}
	}
	return []listenerAPI{
		{"server.sock", "/v1", send(unix, "http://termkeep", "")},
		{"browser listener", "/api", send(http.DefaultClient, ts.base, ts.token)},
	}
}

// The CLI's API and the browser's agree on how a session ends and goes:
// POST …/kill ends it and keeps it listed as closed, DELETE removes an
// ended one with its data, and DELETE refuses a running one unless forced.
// Each step is taken on both listeners, against a running session (cat,
// under a real holder and pty) of its own.
func TestKillAndRemoveAgree(t *testing.T) {
	ts := newLiveServer(t)
	ts.t = t
	t.Cleanup(ts.srv.killAll)
	type step struct {
		method, path string // path after /sessions/{ref}
		status       int
		state        string // the session's state after the step; "" when gone
		errHas       string // for an error: what its message names
	}
	steps := []step{
		{"DELETE", "", 409, "running", "running"},
		{"DELETE", "?force=maybe", 400, "running", "force"},
		{"DELETE", "?force=0", 409, "running", "running"},
		{"POST", "/kill", 200, "closed", ""},
		{"POST", "/kill", 200, "closed", ""}, // ending an ended session succeeds
		{"DELETE", "", 204, "", ""},
		{"DELETE", "", 404, "", "no session"},
		{"POST", "/kill", 404, "", "no session"},
	}
	forced := []step{
		{"DELETE", "?force=1", 204, "", ""},
		{"GET", "", 404, "", "no session"},
	}
	for _, a := range bothAPIs(t, ts) {
		for _, run := range []struct {
			name  string
			steps []step
		}{{"kill then remove", steps}, {"forced remove", forced}} {
			name := strings.ReplaceAll(fmt.Sprintf("%s-%s", a.prefix[1:], run.name), " ", "-")
			status, b := a.do("POST", a.prefix+"/sessions", map[string]any{"name": name, "cwd": "/", "command": []string{"__cat"}})
			if status != http.StatusCreated {
				t.Fatalf("%s: create: %d %s", a.name, status, b)
			}
			var made api.Session
			json.Unmarshal(b, &made)
			if made.State != "running" {
				t.Fatalf("%s: made %+v, want a running session", a.name, made)
			}
			for i, st := range run.steps {
				what := fmt.Sprintf("%s, %s, step %d: %s %s/sessions/%s%s", a.name, run.name, i, st.method, a.prefix, name, st.path)
				status, b := a.do(st.method, a.prefix+"/sessions/"+name+st.path, nil)
				if status != st.status {
					t.Fatalf("%s: status %d, want %d; body %s", what, status, st.status, b)
				}
				if st.errHas != "" {
					var e api.Error
					if json.Unmarshal(b, &e) != nil || !strings.Contains(e.Error, st.errHas) {
						t.Errorf("%s: error %s does not mention %q", what, b, st.errHas)
					}
				}
				if st.method == "POST" && status == 200 {
					var got api.Session
					if json.Unmarshal(b, &got); got.State != st.state {
						t.Errorf("%s: answered a session in state %q, want %q", what, got.State, st.state)
					}
				}
				status, b = a.do("GET", a.prefix+"/sessions/"+name, nil)
				var got api.Session
				json.Unmarshal(b, &got)
				switch {
				case st.state == "" && status != 404:
					t.Errorf("%s: the session is still there: %d %s", what, status, b)
				case st.state != "" && got.State != st.state:
					t.Errorf("%s: the session is %q (%d), want %q", what, got.State, status, st.state)
				}
				_, err := os.Stat(ts.dir.Session(made.ID))
				if gone := errors.Is(err, os.ErrNotExist); gone != (st.state == "") {
					t.Errorf("%s: session directory gone=%v (%v), want gone=%v", what, gone, err, st.state == "")
				}
			}
		}
	}
}

// A session is removed whole while its holder still runs: after its
// child's end a holder lingers, reading and logging what the processes
// the child left behind print (the session is running until then). Killed
// then removed, or removed by force, it goes with its directory and its
// holder.
func TestRemoveWhileHolderLingers(t *testing.T) {
	ts := newLiveServer(t)
	ts.t = t
	t.Cleanup(ts.srv.killAll)
	a := bothAPIs(t, ts)[0]
	for _, how := range []string{"kill", "force"} {
		name := "lingers-" + how
		status, b := a.do("POST", a.prefix+"/sessions", map[string]any{"name": name, "cwd": "/", "command": []string{"__leaves"}})
		if status != http.StatusCreated {
			t.Fatalf("create: %d %s", status, b)
		}
		var made api.Session
		json.Unmarshal(b, &made)
		dir := ts.dir.Session(made.ID)
		m, err := sessiondir.ReadMeta(dir)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			var got api.Session
			_, b := a.do("GET", a.prefix+"/sessions/"+name, nil)
			if json.Unmarshal(b, &got); got.Lingering != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the session's child has not ended, or its holder does not linger: %s", b)
			}
			time.Sleep(20 * time.Millisecond)
		}
		force := "?force=1"
		if how == "kill" {
			force = ""
			if status, b := a.do("POST", a.prefix+"/sessions/"+name+"/kill", nil); status != http.StatusOK {
				t.Fatalf("kill: %d %s", status, b)
			}
		}
		if status, b := a.do("DELETE", a.prefix+"/sessions/"+name+force, nil); status != http.StatusNoContent {
			t.Fatalf("%s: DELETE: %d %s", how, status, b)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the session directory is still there: %v", how, err)
		}
		deadline = time.Now().Add(5 * time.Second)
		for running(m.HolderPid) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the holder (pid %d) still runs", how, m.HolderPid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// running says whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
