package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"termkeep/internal/statedir"
)

func TestListenIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7420": true, "127.1.2.3:0": true, "localhost:0": true, "LOCALHOST:1": true, "[::1]:7420": true,
		"0.0.0.0:7420": false, ":7420": false, "[::]:0": false, "192.168.1.5:7420": false,
		"example.com:443": false, "127.0.0.1": false, "": false,
	} {
		if got := listenIsLoopback(addr); got != want {
			t.Errorf("listenIsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestParseOrigins(t *testing.T) {
	got, err := parseOrigins([]string{"https://Term.Example.com", "http://h:8080", "https://h:443", "http://h:80/", " ", "http://[::1]:80"})
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, u := range got {
		s = append(s, u.String())
	}
	want := "https://term.example.com http://h:8080 https://h http://h http://[::1]"
	if strings.Join(s, " ") != want {
		t.Errorf("parsed %v, want %s", s, want)
	}
	for _, bad := range []string{"term.example.com", "ftp://h", "https://", "https://h/path", "https://h?q=1", "https://u@h", "*"} {
		if _, err := parseOrigins([]string{bad}); err == nil || !strings.Contains(err.Error(), "scheme://host") {
			t.Errorf("origin %q: %v", bad, err)
		}
	}
}

func TestGatewayTLSConfig(t *testing.T) {
	cert, key := writeCert(t, t.TempDir())
	cases := []struct {
		cfg     Config
		tls     bool
		problem string
	}{
		{cfg: Config{Listen: "127.0.0.1:0"}},
		{cfg: Config{Listen: ""}},
		{cfg: Config{Listen: "0.0.0.0:0"}, problem: "--insecure-no-tls"},
		{cfg: Config{Listen: ":7420"}, problem: "not a loopback address"},
		{cfg: Config{Listen: "0.0.0.0:0", InsecureNoTLS: true}},
		{cfg: Config{Listen: "0.0.0.0:0", TLSCert: cert, TLSKey: key}, tls: true},
		{cfg: Config{Listen: "127.0.0.1:0", TLSCert: cert, TLSKey: key}, tls: true},
		{cfg: Config{Listen: "127.0.0.1:0", TLSCert: cert}, problem: "--tls-key"},
		{cfg: Config{Listen: "127.0.0.1:0", TLSCert: key, TLSKey: cert}, problem: "load the TLS certificate"},
		{cfg: Config{Listen: "127.0.0.1:0", AllowedOrigins: []string{"evil"}}, problem: "not an origin"},
	}
	for _, c := range cases {
		got, _, err := gatewayTLS(c.cfg)
		switch {
		case c.problem != "" && (err == nil || !strings.Contains(err.Error(), c.problem)):
			t.Errorf("%+v: %v, want an error about %s", c.cfg, err, c.problem)
		case c.problem == "" && err != nil:
			t.Errorf("%+v: %v", c.cfg, err)
		case c.problem == "" && (got != nil) != c.tls:
			t.Errorf("%+v: TLS %v, want %v", c.cfg, got != nil, c.tls)
		}
	}
	// New refuses before it takes the state directory.
	d := t.TempDir()
	_, err := New(context.Background(), Config{StateDir: statedir.Dir(d), HolderArgv: []string{"/bin/false"}, Listen: "0.0.0.0:0"})
	if err == nil || !strings.Contains(err.Error(), "--tls-cert") {
		t.Errorf("New on 0.0.0.0 without TLS: %v", err)
	}
	if entries, _ := os.ReadDir(d); len(entries) != 0 {
		t.Errorf("the refused server wrote %v", entries)
	}
}

// The guard of a TLS listener knows its https origins; allowed origins add
// their origin and host.
func TestGuardConfigure(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8443}
	origins, _ := parseOrigins([]string{"https://term.example.com", "http://other:9000"})
	g := newGuard(addr, strings.Repeat("t", 43), "https://127.0.0.1:8443/")
	g.configure(true, addr.Port, origins)
	for _, o := range []string{"https://127.0.0.1:8443", "https://localhost:8443", "https://term.example.com", "http://other:9000"} {
		if !g.origins[o] {
			t.Errorf("origin %s not accepted", o)
		}
	}
	if g.origins["http://127.0.0.1:8443"] {
		t.Error("the http origin of a TLS listener is accepted")
	}
	for _, h := range []string{"127.0.0.1:8443", "term.example.com", "other:9000"} {
		if !g.hosts[h] {
			t.Errorf("host %s not answered", h)
		}
	}
	if !g.secure {
		t.Error("the guard of a TLS listener sets cookies without Secure")
	}
	if u := gatewayURL(&net.TCPAddr{IP: net.IPv4zero, Port: 8443}, true, origins); u != "https://term.example.com/" {
		t.Errorf("url of a TLS listener on every interface: %s", u)
	}
	if u := gatewayURL(&net.TCPAddr{IP: net.IPv4zero, Port: 80}, false, nil); u != "http://127.0.0.1:80/" {
		t.Errorf("url of a plain listener on every interface: %s", u)
	}
}

// A server with a certificate serves HTTPS; the old cookie is expired with
// Secure.
func TestTLSListener(t *testing.T) {
	cert, key := writeCert(t, t.TempDir())
	d, _ := os.MkdirTemp("", "tks")
	defer os.RemoveAll(d)
	srv, err := New(context.Background(), Config{
		StateDir: statedir.Dir(d), HolderArgv: []string{"/bin/false"}, Listen: "127.0.0.1:0",
		TLSCert: cert, TLSKey: key, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	defer func() { srv.Shutdown(false); <-done }()
	u := srv.BrowserURL()
	if !strings.HasPrefix(u, "https://127.0.0.1:") {
		t.Fatalf("browser URL %q", u)
	}
	c := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Cookie", oldTokenCookie+"=x")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cs := resp.Cookies(); resp.StatusCode != http.StatusOK || len(cs) != 1 || !cs[0].Secure || cs[0].MaxAge >= 0 {
		t.Errorf("the page over TLS with the old cookie: %s %v", resp.Status, resp.Header["Set-Cookie"])
	}
	if resp.TLS == nil || resp.TLS.NegotiatedProtocol == "h2" {
		t.Errorf("connection state %+v: want TLS with HTTP/1.1", resp.TLS)
	}
}

func TestLoginLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	l := newLoginLimiter(clock, slog.New(slog.DiscardHandler))
	for i := 1; i <= LoginFailures; i++ {
		if blocked, _ := l.fail("192.0.2.1:1000"); blocked {
			t.Fatalf("failure %d blocked", i)
		}
	}
	blocked, retry := l.fail("192.0.2.1:2000") // another port, the same address
	if !blocked || retry != time.Minute {
		t.Errorf("failure %d: blocked %v, retry %v", LoginFailures+1, blocked, retry)
	}
	if blocked, _ := l.fail("192.0.2.2:1000"); blocked {
		t.Error("another address is blocked")
	}
	// One /64 is one address.
	for i := 0; i <= LoginFailures; i++ {
		blocked, _ = l.fail(fmt.Sprintf("[2001:db8::%x]:1", i+1))
	}
	if !blocked {
		t.Error("failures across one /64 are not counted together")
	}
	mu.Lock()
	now = now.Add(40 * time.Second)
	mu.Unlock()
	if blocked, retry := l.fail("192.0.2.1:1"); !blocked || retry != 20*time.Second {
		t.Errorf("40s later: blocked %v, retry %v", blocked, retry)
	}
	mu.Lock()
	now = now.Add(21 * time.Second)
	mu.Unlock()
	if blocked, _ := l.fail("192.0.2.1:1"); blocked {
		t.Error("still blocked after the minute")
	}
}

// On the listener: past the limit wrong tokens get 429, requests without a
// token still 401, and the right token passes.
func TestLoginLimitOnListener(t *testing.T) {
	ts := newTestServer(t, "127.0.0.1:0")
	for i := 0; i < LoginFailures; i++ {
		expectStatus(t, ts.do("GET", "/api/sessions", "", nil, "Authorization", "Bearer nope"), 401)
	}
	resp := ts.do("GET", "/api/sessions", "", nil, "Authorization", "Bearer nope")
	expectJSONError(t, resp, 429, "wrong access tokens")
	if resp.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	expectStatus(t, ts.do("GET", "/ws/sessions/x", "", nil, "Upgrade", "websocket", "Connection", "Upgrade",
		"Sec-WebSocket-Protocol", WSProtocol+", "+WSAuthPrefix+browserSecretPrefix+"nope"), 429)
	expectStatus(t, ts.do("GET", "/api/sessions", "", nil), 401)
	expectStatus(t, ts.do("GET", "/api/sessions", "bearer", nil), 200)
}

func TestNamesAndRefs(t *testing.T) {
	for _, name := range []string{"a", "web-1", "a.b", "x@y+z", "A_B", strings.Repeat("n", 64)} {
		if p := nameProblem(name); p != "" || !validRef(name) {
			t.Errorf("name %q refused: %s", name, p)
		}
	}
	for _, name := range []string{"", "..", "a..b", "../x", "a/b", `a\b`, "a\x00", "a\nb", "a\r", ".x", "-x", " x", strings.Repeat("n", 65), "é"} {
		if nameProblem(name) == "" {
			t.Errorf("name %q allowed", name)
		}
	}
	for _, ref := range []string{"../../etc", "..", "/etc", "a/b", "a\x00b", "a\nb", ""} {
		if validRef(ref) {
			t.Errorf("ref %q looked up", ref)
		}
	}
}

func TestCheckEnv(t *testing.T) {
	many := make([]string, MaxEnvVars+1)
	for i := range many {
		many[i] = "A=1"
	}
	for _, c := range []struct {
		names   []string
		lists   [][]string
		problem string
	}{
		{nil, [][]string{os.Environ()}, ""},
		{[]string{"KEEP"}, [][]string{{"A=1", "BASH_FUNC_f%%=() { echo; }", "lower.dot-dash=x", "E="}, {"B=2"}}, ""},
		{nil, [][]string{{"A=1", "NOEQUALS"}}, "no '='"},
		{nil, [][]string{{"A=1"}, {"NOEQUALS"}}, "no '='"},
		{[]string{"KEEP=1"}, nil, "no valid name"},
		{nil, [][]string{many}, "at most 1000"},
		{nil, [][]string{many[:600], many[:401]}, "at most 1000"},
		{nil, [][]string{{"A=" + strings.Repeat("x", MaxEnvBytes)}}, "1 MiB"},
		{nil, [][]string{{"A B=1"}}, "no valid name"},
		{nil, [][]string{{"=1"}}, "no valid name"},
		{nil, [][]string{{"A\n=1"}}, "no valid name"},
		{nil, [][]string{{"É=1"}}, "no valid name"},
		{nil, [][]string{{"A=x\x00y"}}, "NUL"},
	} {
		err := checkEnv(c.names, c.lists...)
		if (c.problem == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.problem)) {
			t.Errorf("checkEnv(%.60q) = %v, want %q", c.lists, err, c.problem)
		}
	}
}

// Bodies larger than the bound are refused with a sentence, not a JSON
// syntax error.
func TestDecodeJSONTooLarge(t *testing.T) {
	body := `{"name":"` + strings.Repeat("x", maxJSONBody) + `"}`
	var v struct{ Name string }
	err := decodeJSON(httptest.NewRequest("POST", "/", strings.NewReader(body)), &v)
	if err == nil || !strings.Contains(err.Error(), "larger than 2 MiB") {
		t.Errorf("oversized body: %v", err)
	}
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key.
func writeCert(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}
