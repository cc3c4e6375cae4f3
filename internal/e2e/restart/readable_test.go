package restart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/e2e"
	"termkeep/internal/screen"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// readable is a session of TestScreensReadableAfterRestart and the lines
// its screen must show.
type readable struct {
	id   string
	want []string
}

// After the server is killed (SIGKILL) with ten ended sessions and one
// running, the first read of each screen after the restart succeeds with
// the screen's text: by capture, over HTTP, by MCP's read_screen and by a
// viewer's snapshot, each the first read of a fresh server. Some sessions
// ended while the server ran (their screen checkpoint is at the log's
// end), some while no server ran (the checkpoint is behind it, or there is
// none), one in a full-screen program.
func TestScreensReadableAfterRestart(t *testing.T) {
	e2e.SkipShort(t) // four restarts and eleven runs of the CLI: about 20 s
	t.Parallel()     // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	trigger := filepath.Join(t.TempDir(), "go")
	cwd := t.TempDir()
	var all []readable
	newSession := func(name, script string, want ...string) {
		t.Helper()
		s, err := e.C.Create(context.Background(), api.CreateRequest{Name: name, Command: []string{"sh", "-c", script}, Cwd: cwd, Env: os.Environ()})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		all = append(all, readable{s.ID, want})
	}
	for i := range 5 {
		newSession(fmt.Sprintf("early-%d", i), fmt.Sprintf(`printf 'early-%d one\nearly-%d two\n'; exit %d`, i, i, i),
			fmt.Sprintf("early-%d one", i), fmt.Sprintf("early-%d two", i))
	}
	for i := 5; i < 9; i++ {
		script := fmt.Sprintf(`printf 'late-%d waits\n'; while [ ! -e %s ]; do sleep 0.05; done; printf 'late-%d done\n'`, i, trigger, i)
		if i == 8 {
			// A longer tail for the model to catch up with.
			script = fmt.Sprintf(`printf 'late-%d waits\n'; while [ ! -e %s ]; do sleep 0.05; done; seq 1 200000; printf 'late-%d done\n'`, i, trigger, i)
		}
		newSession(fmt.Sprintf("late-%d", i), script, fmt.Sprintf("late-%d done", i))
	}
	newSession("full-9", `printf '\033[?1049h\033[H\033[2J\033[5;10Hfull-9 drawn'; exit 9`, "         full-9 drawn")
	newSession("running-10", `printf 'running-10 up\n'; exec sleep 600`, "running-10 up")

	// The early ones and the full-screen one end while the server runs:
	// its screen model writes their checkpoint at the end.
	for _, r := range append(all[:5:5], all[9]) {
		e2e.WaitFor(t, 20*time.Second, "session "+r.id+" to exit", func() bool { return e.Session(r.id).State == "exited" })
		e2e.WaitFor(t, 20*time.Second, "session "+r.id+"'s screen checkpoint", func() bool {
			_, err := os.Stat(filepath.Join(e.Dir, "sessions", r.id, "screen.ckpt"))
			return err == nil
		})
	}
	for _, r := range all[5:9] {
		e2e.WaitFor(t, 20*time.Second, "session "+r.id+" to print", func() bool { return e.Session(r.id).End > 0 })
	}
	e2e.WaitFor(t, 20*time.Second, "the running session to print", func() bool { return e.Session(all[10].id).End > 0 })

	// restart kills the server and starts another; the late sessions end
	// while none runs.
	restart := func() {
		t.Helper()
		e.KillServer()
		if err := os.WriteFile(trigger, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, r := range all[5:9] {
			e2e.WaitFor(t, 30*time.Second, "session "+r.id+" to end with no server", func() bool {
				m, err := sessiondir.ReadMeta(filepath.Join(e.Dir, "sessions", r.id))
				return err == nil && m.EndedAt != nil
			})
		}
		e.StartServer()
	}
	check := func(how string, r readable, text string, took time.Duration) {
		t.Helper()
		for _, w := range r.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s of %s, the first after the restart (%s): no %q in\n%s", how, r.id, took.Round(time.Millisecond), w, text)
			}
		}
		t.Logf("%s of %s: %s", how, r.id, took.Round(time.Millisecond))
	}

	restart()
	for _, r := range all {
		start := time.Now()
		out, errs, code := e.Tk("capture", r.id)
		if code != 0 {
			t.Errorf("capture %s, the first after the restart: exit %d after %s: %s", r.id, code, time.Since(start).Round(time.Millisecond), errs)
			continue
		}
		check("capture", r, out, time.Since(start))
	}

	restart()
	for _, r := range all {
		start := time.Now()
		status, body := e.UnixGet("/v1/sessions/" + r.id + "/screen")
		if status != 200 {
			t.Errorf("GET the screen of %s, the first after the restart: %d after %s: %s", r.id, status, time.Since(start).Round(time.Millisecond), body)
			continue
		}
		check("GET screen", r, string(body), time.Since(start))
	}

	restart()
	mcp := e2e.StartMCP(t, e)
	mcp.Initialize()
	for _, r := range all {
		start := time.Now()
		_, text, isErr := mcp.Try("read_screen", map[string]any{"session": r.id})
		if isErr {
			t.Errorf("read_screen %s, the first after the restart: %s after %s", r.id, text, time.Since(start).Round(time.Millisecond))
			continue
		}
		check("read_screen", r, text, time.Since(start))
	}

	restart()
	for _, r := range all {
		start := time.Now()
		text, err := snapshotText(e, r.id)
		if err != nil {
			t.Errorf("the snapshot of %s for a new viewer, the first after the restart: %v after %s", r.id, err, time.Since(start).Round(time.Millisecond))
			continue
		}
		check("attach", r, text, time.Since(start))
	}
}

// snapshotText attaches to the session as a fresh viewer and returns the
// text of the snapshot it starts with.
func snapshotText(e *e2e.Env, ref string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := e.C.Attach(ctx, ref, wire.Hello{Role: wire.RoleViewer, From: wire.FromSnapshot, Cols: 80, Rows: 24})
	if err != nil {
		return "", err
	}
	defer s.Close()
	for {
		f, err := s.Next()
		if err != nil {
			return "", err
		}
		switch f.Type {
		case wire.TypeError:
			_, msg, _ := wire.ParseError(f.Payload)
			return "", fmt.Errorf("the server said: %s", msg)
		case wire.TypeSnapshot:
			_, data, err := wire.ParseOutput(f.Payload)
			if err != nil {
				return "", err
			}
			scr := screen.New(80, 24, screen.Options{})
			scr.Write(data)
			return scr.Text(0), nil
		}
	}
}
