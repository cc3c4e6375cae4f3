package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"termkeep/internal/holder"
	"termkeep/internal/sessiondir"
	"termkeep/internal/wire"
)

// SessionWorks checks that a session takes input and shows it, and that a
// new viewer gets its screen.
func (e *Env) SessionWorks(ref, word string) {
	e.T.Helper()
	e.MustTk("send", ref, word)
	WaitFor(e.T, 20*time.Second, "the session to echo "+word, func() bool {
		return strings.Contains(e.MustTk("capture", ref), word)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := e.C.Attach(ctx, ref, wire.Hello{Version: wire.Version, Role: wire.RoleViewer, From: wire.FromSnapshot, Cols: 80, Rows: 24})
	if err != nil {
		e.T.Fatalf("attach to %s: %v", ref, err)
	}
	defer s.Close()
	var screen []byte
	for !bytes.Contains(screen, []byte(word)) {
		f, err := s.Next()
		if err != nil {
			e.T.Fatalf("viewer of %s: %v (it saw %q)", ref, err, screen)
		}
		switch f.Type {
		case wire.TypeSnapshot, wire.TypeOutput:
			screen = append(screen, f.Payload...)
		}
	}
}

// HolderLives checks that session id's holder and child run and its
// directory is whole.
func (e *Env) HolderLives(id string) {
	e.T.Helper()
	dir := filepath.Join(e.Dir, "sessions", id)
	m, err := sessiondir.ReadMeta(dir)
	if err != nil {
		e.T.Fatalf("session %s: %v", id, err)
	}
	if !holder.IsHolder(m.HolderPid) {
		e.T.Errorf("session %s: holder %d is gone", id, m.HolderPid)
	}
	if err := syscall.Kill(m.Pid, 0); err != nil {
		e.T.Errorf("session %s: child %d is gone: %v", id, m.Pid, err)
	}
	if _, err := os.Stat(filepath.Join(dir, sessiondir.LogDir)); err != nil {
		e.T.Errorf("session %s: %v", id, err)
	}
}

// NoHalfSessions checks that the registry lists n sessions, all running,
// each with its directory and a live holder, and that no other session
// directory exists.
func (e *Env) NoHalfSessions(n int) {
	e.T.Helper()
	list := e.Ls()
	dirs, _ := filepath.Glob(filepath.Join(e.Dir, "sessions", "*"))
	if len(list) != n || len(dirs) != n {
		e.T.Errorf("%d sessions listed, %d directories; want %d of each", len(list), len(dirs), n)
	}
	for _, s := range list {
		if s.State != "running" {
			e.T.Errorf("session %s is %s (%s)", s.ID, s.State, s.Reason)
		}
		e.HolderLives(s.ID)
	}
}

// WaitStill waits until session ref has printed nothing for d, and returns
// its end offset then: a program redrawing its screen (vim after a key) has
// finished. It fails the test after 30 s of output that does not stop.
func (e *Env) WaitStill(ref string, d time.Duration) uint64 {
	e.T.Helper()
	end, since := e.Session(ref).End, time.Now()
	WaitFor(e.T, 30*time.Second, "session "+ref+" to print nothing for "+d.String(), func() bool {
		if now := e.Session(ref).End; now != end {
			end, since = now, time.Now()
		}
		return time.Since(since) >= d
	})
	return end
}
