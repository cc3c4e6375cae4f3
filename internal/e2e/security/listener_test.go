package security

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"termkeep/internal/e2e"
)

// A server started in the background writes its output to server.log: the
// access token appears in no file of the state directory but its own
// token file and the registry, while `termkeep serve` in the foreground
// still prints the address to open, token included, on its terminal.
func TestSecurityTokenNotLogged(t *testing.T) {
	e := e2e.NewEnv(t)
	cmd := exec.Command(e2e.TkBin, "--state-dir", e.Dir, "new", "--name", "n", "--", "cat")
	cmd.Env = append(os.Environ(), "TERMKEEP_LISTEN=127.0.0.1:0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("termkeep new with autostart: %v: %s", err, out)
	}
	e.SessionWorks("n", "token-free")
	tok, err := os.ReadFile(filepath.Join(e.Dir, "token"))
	if err != nil || len(bytes.TrimSpace(tok)) < 32 {
		t.Fatalf("the autostarted server made no token: %q %v", tok, err)
	}
	tok = bytes.TrimSpace(tok)
	log, _ := os.ReadFile(filepath.Join(e.Dir, "server.log"))
	if !bytes.Contains(log, []byte("termkeep url")) {
		t.Errorf("server.log does not say how to get the address to open:\n%s", log)
	}
	checked := 0
	filepath.WalkDir(e.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(e.Dir, p)
		if rel == "token" || strings.HasPrefix(rel, "termkeep.db") {
			return nil
		}
		checked++
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, tok) {
			t.Errorf("%s holds the access token", rel)
		}
		return nil
	})
	if checked < 3 {
		t.Errorf("only %d files checked in %s", checked, e.Dir)
	}

	// In the foreground, on a terminal: the address with its token.
	fg := e2e.NewEnv(t)
	serve := exec.Command(e2e.TkBin, "serve", "--state-dir", fg.Dir, "--listen", "127.0.0.1:0")
	p, err := pty.Start(serve)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { serve.Process.Kill(); serve.Wait(); p.Close() }()
	var mu sync.Mutex
	var out bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := p.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	e2e.WaitFor(t, 20*time.Second, "the server's token file", func() bool {
		b, err := os.ReadFile(filepath.Join(fg.Dir, "token"))
		return err == nil && len(bytes.TrimSpace(b)) >= 32
	})
	fgTok, _ := os.ReadFile(filepath.Join(fg.Dir, "token"))
	e2e.WaitFor(t, 20*time.Second, "serve to print the address with its token on its terminal", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Contains(out.Bytes(), bytes.TrimSpace(fgTok))
	})
}

// runAs starts the test binary as child program mode under uid and gid,
// with vars, and returns it and its stdout as it grows.
func runAs(t *testing.T, uid, gid int, mode string, vars ...string) (*exec.Cmd, *syncOut) {
	t.Helper()
	bin, err := os.MkdirTemp("", "tkself")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	os.Chmod(bin, 0o755)
	data, err := os.ReadFile(e2e.SelfBin)
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(bin, "self")
	if err := os.WriteFile(self, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	cmd.Env = append([]string{"HOME=/", "PATH=/usr/bin:/bin", "TK_CHILD=" + mode}, vars...)
	out := &syncOut{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, out
}

// syncOut is a buffer written by one goroutine and read by another.
type syncOut struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *syncOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *syncOut) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// nobodyIDs returns the uid and gid of nobody, skipping the test unless it
// runs as root (which may act as another user).
func nobodyIDs(t *testing.T) (int, int) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to run a program as nobody")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	return uid, gid
}

// A state directory that another user planted, with a socket of theirs in
// it, and a socket of another user's server in a directory of our own: the
// CLI refuses both before it sends a byte, with a sentence that names the
// directory or the uid, and the planted socket receives nothing: not a
// typed password, not an environment.
func TestSecurityPlantedStateDir(t *testing.T) {
	uid, gid := nobodyIDs(t)
	tk := func(dir string, args ...string) (string, int) {
		cmd := exec.Command(e2e.TkBin, append([]string{"--state-dir", dir}, args...)...)
		cmd.Env = append(os.Environ(), "TERMKEEP_LISTEN=127.0.0.1:0", "SECRET_OF_THE_OWNER=s3cr3t")
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	refused := func(dir, want string, fake *syncOut, more ...string) {
		t.Helper()
		for _, args := range [][]string{
			{"send", "work", "hunter2\r"},
			{"new", "--name", "work", "--", "sh"},
			{"--no-autostart", "ls"},
			more,
		} {
			if len(args) == 0 {
				continue
			}
			out, code := tk(dir, args...)
			if code == 0 || !strings.Contains(out, want) {
				t.Errorf("termkeep %v in %s: exit %d, %q; want a refusal saying %q", args, dir, code, out, want)
			}
		}
		time.Sleep(200 * time.Millisecond)
		if got := fake.String(); strings.Contains(got, "got") {
			t.Errorf("the planted socket received:\n%s", got)
		}
	}

	// A directory nobody made (a shared path set in TERMKEEP_STATE_DIR, say).
	planted, err := os.MkdirTemp("", "tkplant")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(planted)
	os.Chmod(planted, 0o755)
	os.Chown(planted, uid, gid)
	os.WriteFile(filepath.Join(planted, "url"), []byte("http://127.0.0.1:1/\n"), 0o644)
	os.WriteFile(filepath.Join(planted, "token"), []byte(strings.Repeat("x", 43)+"\n"), 0o644)
	_, fake := runAs(t, uid, gid, "fakesock", "TK_SOCK="+filepath.Join(planted, "server.sock"))
	e2e.WaitFor(t, 20*time.Second, "the planted socket", func() bool { return strings.Contains(fake.String(), "listening") })
	// `termkeep url` talks to no server, but would read a planted address
	// and token.
	refused(planted, fmt.Sprintf("belongs to uid %d, not to you", uid), fake, "url")

	// Our own directory, but the server on its socket runs as nobody.
	e := e2e.NewEnv(t)
	theirs, err := os.MkdirTemp("", "tktheirs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(theirs)
	os.Chown(theirs, uid, gid)
	_, fake2 := runAs(t, uid, gid, "fakesock", "TK_SOCK="+filepath.Join(theirs, "s"))
	e2e.WaitFor(t, 20*time.Second, "nobody's socket", func() bool { return strings.Contains(fake2.String(), "listening") })
	if err := os.Rename(filepath.Join(theirs, "s"), filepath.Join(e.Dir, "server.sock")); err != nil {
		t.Fatal(err)
	}
	refused(e.Dir, fmt.Sprintf("runs as uid %d, not as you", uid), fake2)
	os.Remove(filepath.Join(e.Dir, "server.sock"))
}

// A server whose file limit is 256 and whose browser listener 400
// connections without a token hold from another process: the owner's CLI
// still answers within 2 s, a browser's call with the token still
// answers, and sessions still work and can be created.
func TestListenerFlood(t *testing.T) {
	e2e.SkipShort(t)
	w := e2e.NewWebEnv(t)
	w.MustTk("new", "--name", "keep", "--", "cat")
	w.MustTk("ls") // the CLI's binary in the page cache
	setLimit(t, w.Srv.Cmd.Process.Pid, unix.RLIMIT_NOFILE, 256)

	child := exec.Command(e2e.SelfBin)
	child.Env = append(os.Environ(), "TK_CHILD=flood", "TK_ADDR="+strings.TrimPrefix(w.Base, "http://"), "TK_CONNS=400")
	out := &syncOut{}
	child.Stdout, child.Stderr = out, out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	e2e.WaitFor(t, 60*time.Second, "400 connections", func() bool { return strings.Contains(out.String(), "ready") })
	time.Sleep(time.Second) // the connections settle: idle, waiting to drain, silent

	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		start := time.Now()
		ls := exec.CommandContext(ctx, e2e.TkBin, "--state-dir", w.Dir, "--no-autostart", "ls")
		// A binary built with -race sleeps a second at exit by default.
		ls.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
		b, err := ls.CombinedOutput()
		cancel()
		if err != nil || !strings.Contains(string(b), "keep") {
			t.Fatalf("termkeep ls during the flood: %v after %s: %s", err, time.Since(start).Round(time.Millisecond), b)
		}
		t.Logf("termkeep ls answered in %s", time.Since(start).Round(time.Millisecond))
	}
	// A browser with the token gets through: it may lose a connection to
	// the flood's churn, and tries again as a browser does.
	get := func(path string) (int, []byte) {
		req, _ := http.NewRequest("GET", w.Base+path, nil)
		req.Header.Set("Authorization", "Bearer "+w.Token)
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	e2e.WaitFor(t, 30*time.Second, "a browser call with the token", func() bool {
		code, b := get("/api/sessions")
		return code == http.StatusOK && bytes.Contains(b, []byte(`"keep"`))
	})
	evicted := regexp.MustCompile(`termkeep_browser_connections_dropped_total\{reason="evicted"\} [1-9]`)
	e2e.WaitFor(t, 30*time.Second, "the metrics to count evicted connections", func() bool {
		code, metrics := get("/metrics")
		return code == http.StatusOK && evicted.Match(metrics)
	})
	w.SessionWorks("keep", "flood-ok")
	w.MustTk("new", "--name", "fresh", "--", "cat")
	w.SessionWorks("fresh", "fresh-ok")

	// Viewers with the token take what descriptors there are, up to the
	// reserve, which is the CLI's and the sessions'.
	var viewers []*websocket.Conn
	defer func() {
		for _, c := range viewers {
			c.CloseNow()
		}
	}()
	ws := "ws" + strings.TrimPrefix(w.Base, "http") + "/ws/sessions/keep?from=-1"
	refusing := func() bool {
		b, _ := os.ReadFile(filepath.Join(w.Dir, "server.log"))
		return bytes.Contains(b, []byte("refusing browser connections"))
	}
	// Until the server refuses: on a busy machine a dial may also time out
	// before the descriptors run out, and that is not the limit.
	for failed := 0; failed < 40 && len(viewers) < 400; {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + w.Token}}})
		cancel()
		if err != nil {
			if failed++; failed >= 20 && refusing() {
				break
			}
			continue
		}
		viewers = append(viewers, c)
	}
	// What the server holds, not what dialed: a busy server may take a
	// connection and close it again once it finds no descriptor to spare.
	held := w.Session("keep").Viewers
	t.Logf("%d viewers connected, %d held", len(viewers), held)
	if held >= 256 {
		t.Fatalf("%d viewers on a server whose file limit is 256", held)
	}
	e2e.WaitFor(t, 20*time.Second, "the server to say it refuses connections", refusing)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	if _, err := w.C.List(ctx); err != nil {
		t.Fatalf("list over the unix socket with the descriptors taken: %v", err)
	}
	cancel()
	w.MustTk("new", "--name", "last", "--", "cat")
	w.SessionWorks("last", "last-ok")
}
