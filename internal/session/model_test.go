package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"termkeep/internal/replay"
	"termkeep/internal/screen"
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
