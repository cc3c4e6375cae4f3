package cli

import (
	"bufio"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"termkeep/internal/e2e"
)

// `make run` runs ./bin/termkeep serve, with no termkeep on PATH yet. On
// a terminal it prints the address to open; elsewhere (a file must never
// hold the token) a hint that names the command as it was run, as the
// other hints do.
func TestServeHintNamesCommandAsRun(t *testing.T) {
	t.Parallel()
	for _, onTerminal := range []bool{false, true} {
		e := e2e.NewEnv(t)
		asRun := "./" + filepath.Base(e2e.BinDir) + "/termkeep"
		cmd := exec.Command(e2e.TkBin, "serve", "--state-dir", e.Dir, "--listen", "127.0.0.1:0")
		cmd.Args[0] = asRun
		cmd.Dir = filepath.Dir(e2e.BinDir)
		cmd.Env = append(cmd.Environ(), "PATH=/usr/bin:/bin") // no termkeep on it
		var out io.Reader
		var err error
		if onTerminal {
			out, err = pty.Start(cmd)
		} else if out, err = cmd.StdoutPipe(); err == nil {
			err = cmd.Start()
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
			if c, ok := out.(io.Closer); ok && onTerminal {
				c.Close() // the pty
			}
		})
		got := serveHints(t, out)
		open := got[len(got)-1]
		want := "`" + asRun + " url` prints"
		if onTerminal {
			want = "open http://127.0.0.1:"
		}
		if !strings.Contains(open, want) || !strings.Contains(strings.Join(got, "\n"), asRun+" new --name work") {
			t.Errorf("on a terminal %v: serve printed\n%s\nwant %q in its last line, and %s in its hints", onTerminal, strings.Join(got, "\n"), want, asRun)
		}
	}
}

// serveHints reads serve's output up to its line that starts "open ".
func serveHints(t *testing.T, out io.Reader) []string {
	t.Helper()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- strings.TrimRight(sc.Text(), "\r")
		}
	}()
	var got []string
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended its output without the hint:\n%s", strings.Join(got, "\n"))
			}
			got = append(got, l)
			if strings.HasPrefix(l, "open ") {
				go func() {
					for range lines {
					}
				}()
				return got
			}
		case <-timeout:
			t.Fatalf("no hint after 30 s:\n%s", strings.Join(got, "\n"))
		}
	}
}
