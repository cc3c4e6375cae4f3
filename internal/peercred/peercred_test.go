package peercred

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestUIDOfBothEnds(t *testing.T) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "s"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.DialUnix("unix", nil, ln.Addr().(*net.UnixAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, conn := range []*net.UnixConn{c, s} {
		uid, err := UID(conn)
		if err != nil || uid != os.Getuid() {
			t.Errorf("UID = %d, %v; want %d", uid, err, os.Getuid())
		}
	}
	c.Close()
	s.Close()
	if _, err := UID(s); err == nil {
		t.Error("UID of a closed connection did not fail")
	}
}

func TestPIDOfBothEnds(t *testing.T) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "s"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.DialUnix("unix", nil, ln.Addr().(*net.UnixAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, conn := range []*net.UnixConn{c, s} {
		pid, err := PID(conn)
		if errors.Is(err, ErrUnsupported) {
			t.Skip(err)
		}
		if err != nil || pid != os.Getpid() {
			t.Errorf("PID = %d, %v; want %d", pid, err, os.Getpid())
		}
	}
	s.Close()
	if _, err := PID(s); err == nil {
		t.Error("PID of a closed connection did not fail")
	}
}

// The pid is the peer's, not this process's: a child dials and waits.
func TestPIDOfAnotherProcess(t *testing.T) {
	if sock := os.Getenv("PEERCRED_DIAL"); sock != "" {
		c, err := net.Dial("unix", sock)
		if err != nil {
			os.Exit(1)
		}
		c.Read(make([]byte, 1)) // until the test closes it
		os.Exit(0)
	}
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPIDOfAnotherProcess$")
	cmd.Env = append(os.Environ(), "PEERCRED_DIAL="+sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	ln.SetDeadline(time.Now().Add(10 * time.Second))
	s, err := ln.AcceptUnix()
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	defer s.Close()
	pid, err := PID(s)
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil || pid != cmd.Process.Pid {
		t.Errorf("PID = %d, %v; want the child's %d", pid, err, cmd.Process.Pid)
	}
}
