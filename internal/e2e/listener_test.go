package e2e

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// A server started in the background writes its output to server.log: the
// access token appears in no file of the state directory but its own
// token file and the registry, while `termkeep serve` in the foreground
// still prints the address to open, token included, on its terminal.
func TestSecurityTokenNotLogged(t *testing.T) {
	e := newEnv(t)
	cmd := exec.Command(tkBin, "--state-dir", e.dir, "new", "--name", "n", "--", "cat")
	cmd.Env = append(os.Environ(), "TERMKEEP_LISTEN=127.0.0.1:0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("termkeep new with autostart: %v: %s", err, out)
	}
	e.sessionWorks("n", "token-free")
	tok, err := os.ReadFile(filepath.Join(e.dir, "token"))
	if err != nil || len(bytes.TrimSpace(tok)) < 32 {
		t.Fatalf("the autostarted server made no token: %q %v", tok, err)
	}
	tok = bytes.TrimSpace(tok)
	log, _ := os.ReadFile(filepath.Join(e.dir, "server.log"))
	if !bytes.Contains(log, []byte("termkeep url")) {
		t.Errorf("server.log does not say how to get the address to open:\n%s", log)
	}
	checked := 0
	filepath.WalkDir(e.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(e.dir, p)
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
		t.Errorf("only %d files checked in %s", checked, e.dir)
	}

	// In the foreground, on a terminal: the address with its token.
	fg := newEnv(t)
	serve := exec.Command(tkBin, "serve", "--state-dir", fg.dir, "--listen", "127.0.0.1:0")
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
	waitFor(t, 20*time.Second, "the server's token file", func() bool {
		b, err := os.ReadFile(filepath.Join(fg.dir, "token"))
		return err == nil && len(bytes.TrimSpace(b)) >= 32
	})
	fgTok, _ := os.ReadFile(filepath.Join(fg.dir, "token"))
	waitFor(t, 20*time.Second, "serve to print the address with its token on its terminal", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Contains(out.Bytes(), bytes.TrimSpace(fgTok))
	})
}
