package sessiondir

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// UpdateMeta writes meta.json only with the session's lock, never while a
// holder holds it or answers on its socket, and only when something
// changed.
func TestUpdateMeta(t *testing.T) {
	dir := t.TempDir()
	if err := UpdateMeta(dir, func(*Meta) bool { return true }); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no meta.json: %v, want fs.ErrNotExist", err)
	}
	if err := WriteMeta(dir, Meta{ID: "s1", Name: "a"}); err != nil {
		t.Fatal(err)
	}
	set := func(m *Meta) bool { m.AutoRestore = true; return true }

	// A holder holds the lock.
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := UpdateMeta(dir, set); !errors.Is(err, ErrHolderRuns) {
		t.Fatalf("with the lock held: %v, want ErrHolderRuns", err)
	}
	f.Close()

	// A holder from before the lock answers on its socket.
	ln, err := net.Listen("unix", filepath.Join(dir, SocketFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := UpdateMeta(dir, set); !errors.Is(err, ErrHolderRuns) {
		t.Fatalf("with the socket answering: %v, want ErrHolderRuns", err)
	}
	ln.Close()
	if m, _ := ReadMeta(dir); m.AutoRestore {
		t.Fatal("meta.json written while a holder ran")
	}

	before, _ := os.Stat(filepath.Join(dir, MetaFile))
	if err := UpdateMeta(dir, func(*Meta) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(filepath.Join(dir, MetaFile)); !os.SameFile(before, after) {
		t.Fatal("meta.json replaced although nothing changed")
	}
	if err := UpdateMeta(dir, set); err != nil {
		t.Fatal(err)
	}
	if m, err := ReadMeta(dir); err != nil || !m.AutoRestore || m.ID != "s1" || m.Name != "a" {
		t.Fatalf("after UpdateMeta: %+v (%v)", m, err)
	}
}

// AwaitHolderGone returns once an ending holder lets go of its lock (or
// its socket), and gives up after its bound or with its context.
func TestAwaitHolderGone(t *testing.T) {
	dir := t.TempDir()
	if !AwaitHolderGone(context.Background(), dir, 0) {
		t.Fatal("no holder ever ran: not gone")
	}
	hold := func() *os.File {
		f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		return f
	}
	// An ending holder lets go after 300 ms.
	ending := hold()
	time.AfterFunc(300*time.Millisecond, func() { ending.Close() })
	start := time.Now()
	if !AwaitHolderGone(context.Background(), dir, 30*time.Second) {
		t.Fatal("the lock was let go: want gone")
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("returned after %v, before the lock was let go", d)
	}
	// A holder that stays: the bound, then the context.
	f := hold()
	defer f.Close()
	if AwaitHolderGone(context.Background(), dir, 100*time.Millisecond) {
		t.Fatal("the lock is held: want not gone")
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if AwaitHolderGone(ctx, dir, time.Hour) {
		t.Fatal("the lock is held: want not gone")
	}
	// A holder that answers on its socket (from before the lock).
	f.Close()
	ln, err := net.Listen("unix", filepath.Join(dir, SocketFile))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	time.AfterFunc(200*time.Millisecond, func() { ln.Close() })
	if !AwaitHolderGone(context.Background(), dir, 30*time.Second) {
		t.Fatal("the socket was closed: want gone")
	}
}
