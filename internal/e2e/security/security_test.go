package security

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"termkeep/internal/api"
	"termkeep/internal/client"
	"termkeep/internal/e2e"
	"termkeep/internal/wire"
)

// newWebEnvWith is e2e.NewWebEnv for a server started with extra flags and
// variables.
func newWebEnvWith(t *testing.T, args []string, vars ...string) *e2e.WebEnv {
	t.Helper()
	e := e2e.NewEnv(t)
	e.ServerArgs, e.ServerEnv = args, vars
	e.StartServer()
	u, err := os.ReadFile(filepath.Join(e.Dir, "url"))
	if err != nil {
		t.Fatalf("the server wrote no url file: %v", err)
	}
	tok, err := os.ReadFile(filepath.Join(e.Dir, "token"))
	if err != nil {
		t.Fatal(err)
	}
	return &e2e.WebEnv{Env: e, Base: strings.TrimSuffix(strings.TrimSpace(string(u)), "/"), Token: strings.TrimSpace(string(tok))}
}

// runServe runs `termkeep serve` on dir with args and expects it to exit by
// itself (a refusal) within a generous time.
func runServe(t *testing.T, dir string, args ...string) (stderr string, code int) {
	t.Helper()
	cmd := exec.Command(e2e.TkBin, append([]string{"serve", "--state-dir", dir}, args...)...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return errb.String(), code
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("termkeep serve %v kept running; want a refusal (stderr: %s)", args, errb.String())
		return "", 0
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and localhost
// and its key into dir, and returns their files and a pool that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "termkeep test"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:        true, BasicConstraintsValid: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// A listener that is not loopback refuses plain HTTP unless told in as
// many words, and then says so loudly in its log.
func TestSecurityPlainHTTPOffLoopback(t *testing.T) {
	e := e2e.NewEnv(t)
	errs, code := runServe(t, e.Dir, "--listen", "0.0.0.0:0")
	if code == 0 || !strings.Contains(errs, "not a loopback address") || !strings.Contains(errs, "--tls-cert") ||
		!strings.Contains(errs, "--insecure-no-tls") {
		t.Fatalf("serve on 0.0.0.0 without TLS: exit %d, %q; want a refusal naming --tls-cert and --insecure-no-tls", code, errs)
	}
	if _, err := os.Stat(filepath.Join(e.Dir, "server.sock")); err == nil {
		t.Error("the refused server left a socket")
	}
	// A certificate without its key is refused too.
	if errs, code := runServe(t, e.Dir, "--listen", "127.0.0.1:0", "--tls-cert", "/nonexistent.pem"); code == 0 || !strings.Contains(errs, "--tls-key") {
		t.Errorf("--tls-cert alone: exit %d, %q", code, errs)
	}

	e.ServerArgs = []string{"--listen", "0.0.0.0:0", "--insecure-no-tls"}
	e.StartServer()
	log, _ := os.ReadFile(filepath.Join(e.Dir, "server.log"))
	if !strings.Contains(string(log), "INSECURE") {
		t.Errorf("no loud warning in the log of a plain-HTTP server on 0.0.0.0:\n%s", log)
	}
	u, err := client.BrowserURL(e.C.Dir())
	if err != nil || !strings.HasPrefix(u, "http://") {
		t.Errorf("browser URL %q, %v", u, err)
	}
}

// With a certificate the listener serves HTTPS and WSS, the login cookie is
// Secure, and `termkeep url` says https.
func TestTLSServesHTTPSAndWSS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	w := newWebEnvWith(t, []string{"--listen", "0.0.0.0:0"}, "TERMKEEP_TLS_CERT="+certFile, "TERMKEEP_TLS_KEY="+keyFile)
	w.Client = &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if !strings.HasPrefix(w.Base, "https://127.0.0.1:") {
		t.Fatalf("url file says %q, want https://127.0.0.1:PORT", w.Base)
	}
	u := strings.TrimSpace(w.MustTk("url"))
	if u != w.Base+"/#token="+w.Token {
		t.Errorf("termkeep url = %q, want %s/#token=…", u, w.Base)
	}

	resp, err := w.Client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 == 3 || resp.StatusCode == http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Fatalf("the page over HTTPS: %s, cookies %v", resp.Status, resp.Header["Set-Cookie"])
	}

	// Plain HTTP on the same port gets nothing.
	plain := "http://" + strings.TrimPrefix(w.Base, "https://") + "/api/sessions"
	if resp, err := http.Get(plain); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Errorf("plain HTTP on the TLS port answered 200: %s", b)
		}
	}

	var sess api.Session
	w.API("POST", "/api/sessions", map[string]any{"name": "tls", "command": []string{"cat"}, "cwd": "/"}, 201, &sess)
	v := w.DialViewer("/ws/sessions/tls")
	v.Until("welcome", e2e.IsType(wire.TypeWelcome))
	v.W.Input([]byte("over-wss\r"))
	v.UntilText("over-wss\r\nover-wss")
}

// A WebSocket from a foreign page is refused; an origin the server is told
// to allow (a proxy or DNS name in front of it) is accepted, and its host too.
func TestOriginAllowedByFlag(t *testing.T) {
	dial := func(w *e2e.WebEnv, origin, host string) (int, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		hdr := http.Header{"Authorization": {"Bearer " + w.Token}, "Origin": {origin}}
		c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(w.Base, "http")+"/ws/sessions/o?from=-1",
			&websocket.DialOptions{HTTPHeader: hdr, Host: host})
		if c != nil {
			c.CloseNow()
		}
		if resp == nil {
			return 0, err
		}
		return resp.StatusCode, err
	}

	plain := e2e.NewWebEnv(t)
	plain.MustTk("new", "--name", "o", "--", "cat")
	if code, err := dial(plain, "https://evil.example", ""); code != http.StatusForbidden {
		t.Errorf("upgrade from https://evil.example: %d %v, want 403", code, err)
	}

	w := newWebEnvWith(t, []string{"--allowed-origin", "https://evil.example"})
	w.MustTk("new", "--name", "o", "--", "cat")
	if code, err := dial(w, "https://evil.example", ""); code != http.StatusSwitchingProtocols {
		t.Errorf("upgrade from an allowed origin: %d %v, want 101", code, err)
	}
	if code, err := dial(w, "https://evil.example", "evil.example"); code != http.StatusSwitchingProtocols {
		t.Errorf("upgrade for the allowed origin's host: %d %v, want 101", code, err)
	}
	if code, err := dial(w, "https://other.example", ""); code != http.StatusForbidden {
		t.Errorf("upgrade from an origin not allowed: %d %v, want 403", code, err)
	}
	// The variable works as the flag does.
	v := newWebEnvWith(t, nil, "TERMKEEP_ALLOWED_ORIGINS=https://a.example, https://evil.example")
	v.MustTk("new", "--name", "o", "--", "cat")
	if code, err := dial(v, "https://evil.example", ""); code != http.StatusSwitchingProtocols {
		t.Errorf("upgrade from an origin allowed by TERMKEEP_ALLOWED_ORIGINS: %d %v, want 101", code, err)
	}
}

// Ids and names that read as paths, or carry NUL or newlines, are refused
// or unknown, and nothing is created or touched.
func TestLimitNamesAndIDs(t *testing.T) {
	w := e2e.NewWebEnv(t)
	victim := filepath.Join(filepath.Dir(w.Dir), filepath.Base(w.Dir)+"-victim")
	os.Mkdir(victim, 0o700)
	defer os.RemoveAll(victim)
	rel := "..%2F..%2F" + url.PathEscape(filepath.Base(victim))

	for _, p := range []string{"/api/sessions/..%2F..%2Fetc", "/api/sessions/" + rel} {
		w.API("GET", p, nil, 404, nil)
		w.API("DELETE", p+"?force=1", nil, 404, nil)
		w.API("POST", p+"/kill", nil, 404, nil)
	}
	// A control character in a path is refused before any handler.
	for _, p := range []string{"/api/sessions/a%00b", "/api/sessions/a%0Ab"} {
		w.API("GET", p, nil, 400, nil)
		w.API("DELETE", p+"?remove=1", nil, 400, nil)
	}
	if _, err := w.C.Get(context.Background(), "../../etc"); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Errorf("unix socket, get ../../etc: %v", err)
	}
	if err := w.C.Remove(context.Background(), "../"+filepath.Base(victim), true); err == nil {
		t.Error("unix socket, remove ../victim succeeded")
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("the directory beside the state directory is gone: %v", err)
	}

	for _, name := range []string{"a\x00b", "a\nb", "../x", "a/b", "a..b", ".hidden", strings.Repeat("n", 65)} {
		var e api.Error
		w.API("POST", "/api/sessions", map[string]any{"name": name, "command": []string{"cat"}, "cwd": "/"}, 400, &e)
		if !strings.Contains(e.Error, "not allowed") {
			t.Errorf("name %q refused with %q", name, e.Error)
		}
		if _, err := w.C.CreateWorkspace(context.Background(), api.WorkspaceRequest{Name: name, Dir: "/"}); err == nil {
			t.Errorf("workspace %q created", name)
		}
	}
	if err := w.C.RemoveWorkspace(context.Background(), "../../etc"); err == nil || !strings.Contains(err.Error(), "no workspace") {
		t.Errorf("unix socket, remove workspace ../../etc: %v", err)
	}
	var list []api.Session
	w.API("GET", "/api/sessions", nil, 200, &list)
	ws, _ := w.C.Workspaces(context.Background())
	if len(list) != 0 || len(ws) != 0 {
		t.Errorf("after refusals: sessions %+v, workspaces %+v", list, ws)
	}
	if entries, _ := os.ReadDir(filepath.Join(w.Dir, "sessions")); len(entries) != 0 {
		t.Errorf("session directories after refusals: %v", entries)
	}

	// A rename to a bad name changes nothing.
	w.API("POST", "/api/sessions", map[string]any{"name": "good", "command": []string{"cat"}, "cwd": "/"}, 201, nil)
	w.API("PATCH", "/api/sessions/good", map[string]any{"name": "../bad"}, 400, nil)
	w.API("PATCH", "/api/sessions/good", map[string]any{"name": "bad\nname"}, 400, nil)
	w.API("GET", "/api/sessions/good", nil, 200, nil)
}

// An environment of 5,000 variables, or a variable with no valid name, is
// refused, on both transports, and nothing is created.
func TestLimitEnv(t *testing.T) {
	w := e2e.NewWebEnv(t)
	env := make([]string, 5000)
	for i := range env {
		env[i] = fmt.Sprintf("V%d=x", i)
	}
	var e api.Error
	w.API("POST", "/api/sessions", map[string]any{"name": "env", "command": []string{"cat"}, "cwd": "/", "env": env}, 400, &e)
	if !strings.Contains(e.Error, "at most 1000") {
		t.Errorf("5,000 variables refused with %q", e.Error)
	}
	_, err := w.C.Create(context.Background(), api.CreateRequest{Name: "env", Command: []string{"cat"}, Cwd: "/", Env: env})
	if err == nil || !strings.Contains(err.Error(), "at most 1000") {
		t.Errorf("unix socket, 5,000 variables: %v", err)
	}
	big := []string{"BIG=" + strings.Repeat("x", 1<<20)}
	if _, err := w.C.Create(context.Background(), api.CreateRequest{Command: []string{"cat"}, Cwd: "/", Env: big}); err == nil || !strings.Contains(err.Error(), "1 MiB") {
		t.Errorf("a 1 MiB variable: %v", err)
	}
	for _, bad := range []string{"A B=1", "=1", "NOEQUALS\x00=1", "A=b\x00c"} {
		if _, err := w.C.Create(context.Background(), api.CreateRequest{Command: []string{"cat"}, Cwd: "/", SetEnv: []string{bad}}); err == nil {
			t.Errorf("variable %q accepted", bad)
		}
	}
	var list []api.Session
	w.API("GET", "/api/sessions", nil, 200, &list)
	if len(list) != 0 {
		t.Errorf("sessions after refusals: %+v", list)
	}
	// An ordinary environment still works.
	w.API("POST", "/api/sessions", map[string]any{"name": "env", "command": []string{"cat"}, "cwd": "/", "env": os.Environ()}, 201, nil)
}

// Sizes are 1..1000 everywhere: a create out of range is refused, and a
// viewer's resize out of range is an error that leaves the size as it was.
func TestLimitResize(t *testing.T) {
	w := e2e.NewWebEnv(t)
	for _, size := range [][2]int{{0, 10}, {1001, 24}, {80, 1001}, {70000, 24}} {
		var e api.Error
		w.API("POST", "/api/sessions", map[string]any{"command": []string{"cat"}, "cwd": "/", "cols": size[0], "rows": size[1]}, 400, &e)
		if !strings.Contains(e.Error, "1..1000") {
			t.Errorf("size %v refused with %q", size, e.Error)
		}
	}
	if _, errs, code := w.Tk("new", "--size", "1001x24", "--", "cat"); code == 0 || !strings.Contains(errs, "1..1000") {
		t.Errorf("termkeep new --size 1001x24: exit %d %q", code, errs)
	}
	w.API("POST", "/api/sessions", map[string]any{"name": "rs", "command": []string{"cat"}, "cwd": "/", "cols": 80, "rows": 24}, 201, nil)

	for _, size := range [][2]uint16{{0, 24}, {1001, 24}, {80, 0}, {80, 1001}} {
		v := w.DialViewer("/ws/sessions/rs?from=-1")
		v.Until("welcome", e2e.IsType(wire.TypeWelcome))
		v.W.Frame(wire.TypeResize, binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, size[0]), size[1]))
		f := v.Until("error frame", e2e.IsType(wire.TypeError))
		if code, msg, _ := wire.ParseError(f.Payload); code != wire.CodeMalformed || !strings.Contains(msg, "1..1000") {
			t.Errorf("resize %v answered %d %q", size, code, msg)
		}
		for range v.Frames { // and the connection ends
		}
		if s := w.Session("rs"); s.Cols != 80 || s.Rows != 24 {
			t.Errorf("after a refused resize to %v the session is %dx%d", size, s.Cols, s.Rows)
		}
	}
	// The unix socket's viewers are held to the same bound.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := w.C.Attach(ctx, "rs", wire.Hello{From: wire.FromEnd, Cols: 1001, Rows: 24}); err == nil || !strings.Contains(err.Error(), "1..1000") {
		t.Errorf("attach with a hello of 1001x24: %v", err)
	}
	s, err := w.C.Attach(ctx, "rs", wire.Hello{From: wire.FromEnd})
	if err != nil {
		t.Fatal(err)
	}
	s.Resize(1001, 24)
	for {
		f, err := s.Next()
		if err != nil {
			t.Fatalf("the stream ended without an error frame: %v", err)
		}
		if f.Type == wire.TypeError {
			break
		}
	}
	s.Close()
	// A size in range is taken.
	v := w.DialViewer("/ws/sessions/rs?from=-1")
	v.Until("welcome", e2e.IsType(wire.TypeWelcome))
	v.W.Resize(1000, 50)
	e2e.WaitFor(t, 20*time.Second, "the session to take 1000x50", func() bool {
		s := w.Session("rs")
		return s.Cols == 1000 && s.Rows == 50
	})
}

// A WebSocket message above the read limit, and a frame whose header
// claims more than the largest payload, each end that connection with an
// error; the server and the session carry on.
func TestLimitOversizedMessages(t *testing.T) {
	w := e2e.NewWebEnv(t)
	w.MustTk("new", "--name", "big", "--", "cat")

	// A frame header claiming MaxPayload+1 bytes, in a small message.
	v := w.DialViewer("/ws/sessions/big?from=-1")
	v.Until("welcome", e2e.IsType(wire.TypeWelcome))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hdr := binary.BigEndian.AppendUint32([]byte{byte(wire.TypeInput)}, wire.MaxPayload+1)
	v.C.Write(ctx, websocket.MessageBinary, append(hdr, "xxxx"...))
	f := v.Until("error frame", e2e.IsType(wire.TypeError))
	if code, msg, _ := wire.ParseError(f.Payload); code != wire.CodeMalformed || !strings.Contains(msg, "larger than") {
		t.Errorf("oversized frame answered %d %q", code, msg)
	}
	for range v.Frames {
	}

	// A message above the WebSocket read limit (2 MiB).
	v = w.DialViewer("/ws/sessions/big?from=-1")
	v.Until("welcome", e2e.IsType(wire.TypeWelcome))
	v.C.Write(ctx, websocket.MessageBinary, make([]byte, 3<<20))
	for range v.Frames {
	}
	v.Mu.Lock()
	err := v.Err
	v.Mu.Unlock()
	if err == nil {
		t.Error("the connection survived a 3 MiB message")
	} else if st := websocket.CloseStatus(err); st != -1 && st != websocket.StatusMessageTooBig {
		t.Errorf("closed with %v, want %v", err, websocket.StatusMessageTooBig)
	}

	// The server answers on both transports and the session works.
	if _, err := w.C.Health(context.Background()); err != nil {
		t.Fatalf("server stopped answering: %v", err)
	}
	ok := w.DialViewer("/ws/sessions/big?from=-1")
	ok.Until("welcome", e2e.IsType(wire.TypeWelcome))
	ok.W.Input([]byte("still-here\r"))
	ok.UntilText("still-here\r\nstill-here")
}

// A viewer sending 10,000 tiny input frames as fast as it can is slowed
// down and told so; a viewer of another session meanwhile gets its echo.
func TestLimitInputRate(t *testing.T) {
	w := e2e.NewWebEnv(t)
	w.MustTk("new", "--name", "flood", "--", "cat")
	w.MustTk("new", "--name", "calm", "--", "cat")

	flood := w.DialViewer("/ws/sessions/flood?from=-1")
	flood.Until("welcome", e2e.IsType(wire.TypeWelcome))
	calm := w.DialViewer("/ws/sessions/calm?from=-1")
	calm.Until("welcome", e2e.IsType(wire.TypeWelcome))

	var sent atomic.Int64
	go func() {
		for i := 0; i < 10000; i++ {
			if flood.W.Input([]byte{'x'}) != nil {
				return
			}
			sent.Add(1)
		}
	}()
	f := flood.Until("a too-fast error frame", e2e.IsType(wire.TypeError))
	if code, msg, _ := wire.ParseError(f.Payload); code != wire.CodeTooFast || !strings.Contains(msg, "slowed down") {
		t.Errorf("flood answered %d %q", code, msg)
	}
	if n := sent.Load(); n < 2000 { // the burst (session.InputFrameBurst) passes unslowed
		t.Errorf("slowed after only %d frames", n)
	}
	calm.W.Input([]byte("calm-echo\r"))
	calm.UntilText("calm-echo\r\ncalm-echo")
	if _, err := w.C.Health(context.Background()); err != nil {
		t.Fatalf("server stopped answering during the flood: %v", err)
	}
	flood.C.CloseNow()
}

// Each user may run --max-sessions sessions; one more is refused with a
// sentence and nothing is created, and ending one makes room.
func TestLimitSessionsPerUser(t *testing.T) {
	w := newWebEnvWith(t, []string{"--max-sessions", "2"})
	w.MustTk("new", "--name", "one", "--", "cat")
	w.MustTk("new", "--name", "two", "--", "cat")
	_, errs, code := w.Tk("new", "--name", "three", "--", "cat")
	if code == 0 || !strings.Contains(errs, "--max-sessions") {
		t.Fatalf("third session: exit %d %q", code, errs)
	}
	var e api.Error
	w.API("POST", "/api/sessions", map[string]any{"name": "three", "command": []string{"cat"}, "cwd": "/", "workspace": "ws"}, 409, &e)
	if !strings.Contains(e.Error, "2 running sessions") {
		t.Errorf("over the limit: %q", e.Error)
	}
	if len(w.Ls()) != 2 {
		t.Errorf("sessions after the refusal: %+v", w.Ls())
	}
	if ws, _ := w.C.Workspaces(context.Background()); len(ws) != 0 {
		t.Errorf("the refused create made a workspace: %+v", ws)
	}
	w.MustTk("kill", "one")
	w.MustTk("new", "--name", "three", "--", "cat")
}

// Wrong tokens from one address are answered 429 once there were too many
// this minute; a right token still gets in.
func TestSecurityLoginAttempts(t *testing.T) {
	w := e2e.NewWebEnv(t)
	var codes []int
	for i := 0; i < 20; i++ {
		req, _ := http.NewRequest("GET", w.Base+"/api/sessions", nil)
		req.Header.Set("Authorization", "Bearer wrong-"+strconv.Itoa(i))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
	if codes[0] != 401 || codes[19] != 429 {
		t.Fatalf("statuses of 20 wrong tokens: %v; want 401 first, 429 at the end", codes)
	}
	// A browser credential offered on a WebSocket counts as a try too.
	if code := dialStatus(w, "/ws/sessions/x", "", "termkeep.v1", "termkeep.auth.tkb_wrong"); code != 429 {
		t.Errorf("a wrong browser credential after the limit: %d", code)
	}
	// The right token is let through from the same address, and signs a
	// browser in.
	w.API("GET", "/api/sessions", nil, 200, nil)
	signIn(w, w.Token)
	log, _ := os.ReadFile(filepath.Join(w.Dir, "server.log"))
	if !strings.Contains(string(log), "too many wrong access tokens") {
		t.Error("the server did not log the guesser")
	}
}

// Another user reaches the API socket (its mode opened on purpose) and is
// refused by the peer's uid.
func TestPermSocketOtherUser(t *testing.T) {
	uid, gid := nobodyIDs(t) // listener_test.go
	e := e2e.NewEnv(t)
	e.StartServer()
	// The client binary where nobody can run it.
	bin, err := os.MkdirTemp("", "tkbin-nobody")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(bin)
	os.Chmod(bin, 0o755)
	data, err := os.ReadFile(e2e.TkBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "termkeep"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	// Open the fences the mode bits make, so the uid check alone decides.
	os.Chmod(e.Dir, 0o711)
	os.Chmod(filepath.Join(e.Dir, "server.sock"), 0o666)
	defer os.Chmod(e.Dir, 0o700)

	// nobody's CLI refuses a state directory that is not nobody's own
	// (TestSecurityPlantedStateDir); a program of nobody's that dials the
	// socket itself is refused by the server.
	cmd := exec.Command(filepath.Join(bin, "termkeep"), "--state-dir", e.Dir, "--no-autostart", "ls")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	cmd.Env = []string{"HOME=/", "PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not to you") {
		t.Fatalf("termkeep ls as nobody: %v, %s; want a refusal of the directory", err, out)
	}
	dialer, got := runAs(t, uid, gid, "dial", "TK_SOCK="+filepath.Join(e.Dir, "server.sock"))
	dialer.Wait()
	log, _ := os.ReadFile(filepath.Join(e.Dir, "server.log"))
	if !strings.Contains(string(log), "refused a connection from another user") || strings.Contains(got.String(), "200 OK") {
		t.Errorf("the server did not refuse nobody by uid (nobody's program got %q):\n%s", got, log)
	}
	if _, err := e.C.Health(context.Background()); err != nil {
		t.Errorf("the owner is refused after nobody: %v", err)
	}
}

// The state directory is 0700 and everything in it 0600 (no bits for group
// or others); a directory others may write to is refused with the fix.
func TestPermStateDir(t *testing.T) {
	e := e2e.NewEnv(t)
	os.Chmod(e.Dir, 0o777)
	errs, code := runServe(t, e.Dir, "--listen", "127.0.0.1:0")
	if code == 0 || !strings.Contains(errs, "chmod 700 "+e.Dir) {
		t.Fatalf("serve on a 0777 state directory: exit %d, %q; want a refusal saying chmod 700", code, errs)
	}
	if entries, _ := os.ReadDir(e.Dir); len(entries) != 0 {
		t.Errorf("the refused server wrote %v", entries)
	}
	os.Chmod(e.Dir, 0o755) // readable by others, not writable: tightened, not refused
	e.StartServer()
	id := strings.TrimSpace(e.MustTk("new", "--name", "p", "--", "sh", "-c", "echo hi; exec cat"))
	e.MustTk("wait", "p", "--from", "start", "--output", "hi", "--timeout", "20s")
	e.MustTk("url")
	var checked int
	filepath.WalkDir(e.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file that went away meanwhile
		}
		st, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		checked++
		mode := st.Mode()
		switch {
		case mode.IsDir() && mode.Perm() != 0o700:
			t.Errorf("%s: directory mode %04o, want 0700", p, mode.Perm())
		case !mode.IsDir() && mode.Perm()&0o077 != 0:
			t.Errorf("%s: mode %04o (%s), want 0600 or tighter", p, mode.Perm(), mode.Type())
		}
		return nil
	})
	if checked < 8 {
		t.Errorf("only %d entries checked in %s", checked, e.Dir)
	}
	for _, p := range []string{"server.sock", "token", "url", "termkeep.db", filepath.Join("sessions", id, "holder.sock"), filepath.Join("sessions", id, "meta.json")} {
		if st, err := os.Stat(filepath.Join(e.Dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		} else if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %04o, want 0600", p, st.Mode().Perm())
		}
	}
	var list []json.RawMessage
	json.Unmarshal([]byte(e.MustTk("ls", "--json")), &list)
	if len(list) != 1 {
		t.Errorf("ls after the permission checks: %d sessions", len(list))
	}
}
