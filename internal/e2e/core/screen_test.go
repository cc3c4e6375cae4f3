package core

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/e2e"
	"termkeep/internal/screen"
	"termkeep/internal/session"
	"termkeep/internal/wire"
)

// render feeds a viewer's stream into a terminal emulator of its own until
// the stream reaches offset until, and returns what that viewer's terminal
// shows.
func render(t *testing.T, e *e2e.Env, ref string, hello wire.Hello, until uint64) (string, wire.Welcome) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := e.C.Attach(ctx, ref, hello)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	defer s.Close()
	scr := screen.New(int(s.Welcome.Cols), int(s.Welcome.Rows), screen.Options{})
	next := s.Welcome.Start
	needSnap := s.Welcome.Resume == wire.ResumeSnapshot
	for next < until || needSnap {
		f, err := s.Next()
		if err != nil {
			t.Fatalf("stream ended at %d before %d: %v", next, until, err)
		}
		switch f.Type {
		case wire.TypeSnapshot, wire.TypeOutput:
			off, data, _ := wire.ParseOutput(f.Payload)
			scr.Write(data)
			if f.Type == wire.TypeOutput {
				next = off + uint64(len(data))
			} else {
				next, needSnap = off, false
			}
		case wire.TypeExit:
			until = 0
		}
	}
	return scr.Text(0), s.Welcome
}

// A session running vim, a viewer that attaches fresh: the screen it is
// sent (a snapshot) and `capture` both equal what a viewer that watched from
// the start shows.
func TestFreshViewerSeesTheScreen(t *testing.T) {
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		b.WriteString("line " + strings.Repeat("x", i%50) + " number " + string(rune('a'+i%26)) + "\n")
	}
	os.WriteFile(file, []byte(b.String()), 0o644)
	e.MustTk("new", "--name", "vim", "--size", "80x24", "--", "vim", "-u", "NONE", "-N", file)
	if _, errs, code := e.Tk("wait", "vim", "--from", "start", "--output", "notes.txt", "--timeout", "20s"); code != 0 {
		t.Fatalf("vim did not start: %s", errs)
	}
	e.MustTk("send", "vim", "-l", "50Gdd") // keys: vim takes bracketed pastes as text
	e.MustTk("send", "vim", "-l", "ohello from termkeep")
	e.MustTk("send", "vim", "--key", "Esc")
	if _, errs, code := e.Tk("wait", "vim", "--from", "start", "--output", "hello from termkeep", "--timeout", "20s"); code != 0 {
		t.Fatalf("vim: %s", errs)
	}
	end := e.WaitStill("vim", 500*time.Millisecond) // vim has finished its redraw

	fromStart, _ := render(t, e, "vim", wire.Hello{Role: wire.RoleViewer, From: 0}, end)
	fresh, w := render(t, e, "vim", wire.Hello{Role: wire.RoleViewer, From: wire.FromSnapshot}, end)
	if w.Resume != wire.ResumeSnapshot {
		t.Fatalf("fresh viewer resumed with %q, want a snapshot", w.Resume)
	}
	if fresh != fromStart {
		t.Fatalf("fresh viewer shows\n%s\nbut a viewer from the start shows\n%s", fresh, fromStart)
	}
	if !strings.Contains(fresh, "hello from termkeep") {
		t.Fatalf("screen lacks the edit:\n%s", fresh)
	}
	captured := e.MustTk("capture", "vim")
	if captured != fromStart {
		t.Fatalf("capture shows\n%s\nbut the viewer shows\n%s", captured, fromStart)
	}
	e.MustTk("send", "vim", "-l", ":q!\r")
}

// capture renders the screen, with colors on request and history with
// --scrollback; a restarted server renders the same from its checkpoint
// and the log.
func TestCaptureAndRestart(t *testing.T) {
	e2e.SkipShort(t)
	t.Parallel() // waits more than it works: see e2e.Main
	e := e2e.NewEnv(t)
	e.StartServer()
	e.MustTk("new", "--name", "c", "--size", "60x10", "--", "sh")
	e.MustTk("send", "c", `for i in $(seq 1 30); do echo row-$i; done; printf '\033[31mRED\033[0m plain\n'`)
	if _, errs, code := e.Tk("wait", "c", "--from", "start", "--output", "plain", "--timeout", "20s"); code != 0 {
		t.Fatalf("wait: %s", errs)
	}
	time.Sleep(200 * time.Millisecond)
	text := e.MustTk("capture", "c")
	if lines := strings.Split(strings.TrimRight(text, "\n"), "\n"); len(lines) != 10 {
		t.Fatalf("capture has %d lines, want 10:\n%s", len(lines), text)
	}
	if !strings.Contains(text, "RED plain") || strings.Contains(text, "\x1b") {
		t.Fatalf("plain capture:\n%q", text)
	}
	if ansi := e.MustTk("capture", "--ansi", "c"); !strings.Contains(ansi, "\x1b[") || !strings.Contains(ansi, "RED") {
		t.Fatalf("--ansi capture has no colors:\n%q", ansi)
	}
	withHistory := e.MustTk("capture", "--scrollback", "100", "c")
	if !strings.Contains(withHistory, "row-1\n") || strings.Contains(text, "row-1\n") {
		t.Fatalf("--scrollback did not add history:\n%s", withHistory)
	}

	// A clean restart writes a checkpoint; a SIGKILLed one rebuilds from the
	// last checkpoint and the log. Both render the same screen.
	id := e.Session("c").ID
	e.ShutdownServer()
	if _, err := os.Stat(filepath.Join(e.Dir, "sessions", id, session.CheckpointFile)); err != nil {
		t.Fatalf("no checkpoint after a clean shutdown: %v", err)
	}
	e.StartServer()
	if again := e.MustTk("capture", "--scrollback", "100", "c"); again != withHistory {
		t.Fatalf("after restart capture shows\n%s\nwant\n%s", again, withHistory)
	}
	e.KillServer()
	e.StartServer()
	if again := e.MustTk("capture", "--scrollback", "100", "c"); again != withHistory {
		t.Fatalf("after SIGKILL and restart capture shows\n%s\nwant\n%s", again, withHistory)
	}
}
