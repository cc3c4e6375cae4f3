package server

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"termkeep/internal/holder"
	"termkeep/internal/sessiondir"
	"termkeep/internal/statedir"
)

// The server's own ways of ending a holder without its socket (stopHolder,
// for a holder it started but cannot reach; signalClose, kill's fallback)
// are a close on purpose: the session is recorded "closed", never
// "interrupted" as a holder records SIGTERM from a stopping machine. Each
// ends a real holder process (this test binary as a safe holder running
// cat, under the name termkeep-holder, so that it is known as one).
func TestServerEndsHolderClosed(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	link := filepath.Join(bin, "termkeep-holder")
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	d, err := os.MkdirTemp("", "tke")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	s := &Server{cfg: Config{StateDir: statedir.Dir(d)}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}

	spawn := func(t *testing.T, id string) (*holder.Process, <-chan struct{}) {
		t.Helper()
		p, err := holder.Spawn([]string{link, safeHolderArg}, holder.Spec{
			ID: id, Dir: s.cfg.StateDir.Session(id), Command: []string{"__cat"}, Cwd: "/", Cols: 80, Rows: 24,
		}, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		reaped := p.Reaped()
		t.Cleanup(func() {
			syscall.Kill(p.HolderPid, syscall.SIGKILL)
			<-reaped
		})
		return p, reaped
	}
	closed := func(t *testing.T, id string, reaped <-chan struct{}) {
		t.Helper()
		select {
		case <-reaped:
		case <-time.After(60 * time.Second):
			t.Fatalf("session %s: the holder still runs 60 s after it was asked to close", id)
		}
		m, err := sessiondir.ReadMeta(s.cfg.StateDir.Session(id))
		if err != nil || m.State() != "closed" || m.ExitCode == nil || *m.ExitCode != 129 {
			t.Fatalf("session %s: meta.json %+v (%v), want closed with status 129 (cat hung up)", id, m, err)
		}
	}

	t.Run("stopHolder", func(t *testing.T) {
		p, reaped := spawn(t, "stophold")
		s.stopHolder(p, reaped)
		closed(t, "stophold", reaped)
	})
	t.Run("kill's fallback", func(t *testing.T) {
		_, reaped := spawn(t, "fallback")
		if !s.signalClose("fallback") {
			t.Fatal("signalClose did not signal a live holder")
		}
		closed(t, "fallback", reaped)
	})
	t.Run("a pid that is no holder", func(t *testing.T) {
		// meta.json names a pid the machine gave to another process.
		other := exec.Command("sleep", "60")
		if err := other.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Process.Kill(); other.Wait() })
		dir := s.cfg.StateDir.Session("reused")
		os.MkdirAll(dir, 0o700)
		if err := sessiondir.WriteMeta(dir, sessiondir.Meta{ID: "reused", HolderPid: other.Process.Pid, Version: 3}); err != nil {
			t.Fatal(err)
		}
		if s.signalClose("reused") {
			t.Fatal("signalClose signalled a process that is no holder")
		}
		if err := other.Process.Signal(syscall.Signal(0)); err != nil {
			t.Fatalf("the other process is gone: %v", err)
		}
	})
}
