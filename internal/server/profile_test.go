package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// unixGet is GET path on the server's unix socket.
func (ts *testServer) unixGet(path string) (int, []byte) {
	ts.t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", ts.dir.Socket())
	}}, Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://termkeep" + path)
	if err != nil {
		ts.t.Fatalf("GET %s on the unix socket: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// Profiles: on the unix socket, in pprof's format (gzip'd protobuf) or as
// text; a clear error for a name or parameter that is not one; never on the
// browser listener, whatever the token.
func TestProfiles(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0")
	for _, name := range []string{"heap", "allocs", "goroutine", "threadcreate", "block", "mutex"} {
		code, b := ts.unixGet("/debug/pprof/" + name)
		if code != http.StatusOK || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			t.Errorf("%s: status %d, %d bytes starting %q; want a gzip'd profile", name, code, len(b), b[:min(len(b), 16)])
		}
	}
	code, b := ts.unixGet("/debug/pprof/goroutine?debug=1")
	if code != http.StatusOK || !strings.Contains(string(b), "goroutine profile:") || !strings.Contains(string(b), "watchQuiet") {
		t.Errorf("goroutine?debug=1: status %d, body %.300s", code, b)
	}
	code, b = ts.unixGet("/debug/pprof/cpu?seconds=1")
	if code != http.StatusOK || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Errorf("cpu: status %d, %d bytes", code, len(b))
	}
	code, b = ts.unixGet("/debug/pprof/trace?seconds=1")
	if code != http.StatusOK || !bytes.HasPrefix(b, []byte("go 1.")) || !bytes.Contains(b[:min(len(b), 16)], []byte(" trace")) {
		t.Errorf("trace: status %d, %d bytes starting %q; want an execution trace", code, len(b), b[:min(len(b), 16)])
	}
	for path, want := range map[string]int{
		"/debug/pprof/nope":            http.StatusNotFound,
		"/debug/pprof/heap?debug=7":    http.StatusBadRequest,
		"/debug/pprof/cpu?seconds=0":   http.StatusBadRequest,
		"/debug/pprof/cpu?seconds=999": http.StatusBadRequest,
		"/debug/pprof/cpu?seconds=x":   http.StatusBadRequest,
		"/debug/pprof/trace?seconds=0": http.StatusBadRequest,
	} {
		if code, b := ts.unixGet(path); code != want || !strings.Contains(string(b), `"error"`) {
			t.Errorf("%s: status %d, body %s; want %d with an error", path, code, b, want)
		}
	}
	for _, auth := range []string{"", "bearer"} {
		resp := ts.do("GET", "/debug/pprof/heap", auth, nil)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusOK || bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			t.Errorf("the browser listener (auth %q) served a profile: status %d", auth, resp.StatusCode)
		}
	}
}
