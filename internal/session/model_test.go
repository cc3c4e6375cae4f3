package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/outlog"
	"termkeep/internal/replay"
	"termkeep/internal/screen"
	"termkeep/internal/wire"
)

// A quiet screen with a short history is kept marshalled, and comes back
// whole: for a snapshot, for more output, and as the checkpoint written
// while it is frozen. One with a long history stays live.
func TestModelFreeze(t *testing.T) {
	h := New(Config{ID: "t", Dir: t.TempDir()})
	m := &model{h: h, progress: make(chan struct{}), scr: screen.New(120, 30, screen.Options{})}
	var off uint64
	feed := func(s string) {
		m.apply(off, []byte(s))
		off += uint64(len(s))
	}
	text := func() string {
		var out string
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.at(ctx, off, func(scr *screen.Screen, _ uint64) { out = scr.Text(-1) }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for i := range 40 {
		feed(fmt.Sprintf("\x1b[3%dmline %d\x1b[m\r\n", i%8, i))
	}
	feed("\x1b]0;a title\x07\x1b[?2004huser@host:~$ ")
	want := text()

	m.freeze()
	m.mu.Lock()
	frozen, size := m.scr == nil, len(m.frozen)
	m.mu.Unlock()
	if !frozen || size == 0 || size > 4096 {
		t.Fatalf("after freeze: frozen %v, %d bytes; want frozen, in a few KiB", frozen, size)
	}
	m.checkpoint(true) // from the frozen bytes, without thawing
	m.mu.Lock()
	frozen = m.scr == nil
	m.mu.Unlock()
	if !frozen {
		t.Fatal("a checkpoint thawed the screen")
	}
	scr, at, err := replay.ReadCheckpoint(filepath.Join(h.dir, CheckpointFile))
	if err != nil || at != off || scr.Text(-1) != want {
		t.Fatalf("the checkpoint written while frozen: %v, at %d (want %d), same screen %v", err, at, off, err == nil && scr.Text(-1) == want)
	}
	if got := text(); got != want {
		t.Fatalf("thawed screen differs:\n%s\nwant:\n%s", got, want)
	}
	m.freeze()
	feed("echo more\r\nmore\r\n")
	if got := text(); !strings.HasSuffix(strings.TrimRight(got, "\n "), "more") || !strings.HasPrefix(got, strings.SplitN(want, "\n", 2)[0]) {
		t.Fatalf("output after a freeze:\n%s", got)
	}

	for i := range freezeMaxScrollback + 50 {
		feed(fmt.Sprintf("history %d\r\n", i))
	}
	m.freeze()
	m.mu.Lock()
	frozen = m.scr == nil
	m.mu.Unlock()
	if frozen {
		t.Fatalf("a screen with more than %d lines of history was frozen", freezeMaxScrollback)
	}
}

// Size changes at the model's offset are in the checkpoint written there:
// the window shrunk and grown again, then the session ended with nothing
// more printed. A restarted server, and a replay starting from the
// checkpoint, show the screen after them, whether no snapshot applied
// them yet (pending) or one did after a checkpoint at that offset was
// written (late: it is written again).
func TestModelCheckpointSizes(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(fmt.Sprintf("late=%v", late), func(t *testing.T) {
			h := New(Config{ID: "t", Dir: t.TempDir()})
			m := &model{h: h, progress: make(chan struct{}), scr: screen.New(80, 24, screen.Options{})}
			var out strings.Builder
			out.WriteString("\x1b[?1049h\x1b[H")
			for i := 1; i <= 24; i++ {
				fmt.Fprintf(&out, "row %02d", i)
				if i < 24 {
					out.WriteString("\r\n")
				}
			}
			m.apply(0, []byte(out.String()))
			at := uint64(out.Len())
			if late {
				m.checkpoint(true)
			}
			m.addSize(outlog.SizeChange{Offset: at, Cols: 80, Rows: 12})
			m.addSize(outlog.SizeChange{Offset: at, Cols: 80, Rows: 24})
			if late {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := m.at(ctx, at, func(*screen.Screen, uint64) {}); err != nil {
					t.Fatal(err)
				}
			}
			m.checkpoint(true)
			for _, path := range []string{filepath.Join(h.dir, CheckpointFile), filepath.Join(h.dir, replay.Dir, replay.CheckpointName(at))} {
				scr, off, err := replay.ReadCheckpoint(path)
				if err != nil || off != at {
					t.Fatalf("%s: %v, at %d (want %d)", path, err, off, at)
				}
				if c, r := scr.Size(); c != 80 || r != 24 || !strings.HasPrefix(scr.Text(0), "row 13\n") {
					t.Fatalf("%s: %dx%d screen\n%s\nwant row 13 at the top of 80x24", path, c, r, scr.Text(0))
				}
			}
		})
	}
}

// A session removed right after it ended (termkeep kill, then rm) leaves
// nothing behind: the model's last checkpoints, which it writes when the
// session ends, are written before Close returns, never into the removed
// directory afterwards.
func TestModelWritesNothingAfterClose(t *testing.T) {
	for range 30 {
		vh := newViewerHost(t, outlog.Options{})
		vh.live([]byte("\x1b[31mhello\x1b[m\r\n"))
		vh.h.startModel()
		vh.h.MarkEnded(wire.Exit{State: "exited"})
		vh.h.Close()
		if err := os.RemoveAll(vh.h.dir); err != nil {
			t.Fatalf("remove the session's directory: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
		if _, err := os.Stat(vh.h.dir); err == nil {
			entries, _ := os.ReadDir(vh.h.dir)
			t.Fatalf("the session's directory came back after its removal: %v", entries)
		}
	}
}
