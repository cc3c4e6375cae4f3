package peercred

import (
	"net"
	"os"
	"path/filepath"
	"testing"
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
