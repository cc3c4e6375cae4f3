package server

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"termkeep/internal/rawio"
)

// attach on the server's socket, as the server's own user, is local and
// named by its process; a TCP peer is neither.
func TestLocalFDsPeer(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fds, local, pid := localFDs(rawio.NewConn(s)) // as hijackRaw hands it over
	if fds == nil || !local || pid != os.Getpid() {
		t.Fatalf("localFDs = %v, %v, %d; want a reader, local, pid %d", fds, local, pid, os.Getpid())
	}
	fds.Close()

	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	tc, err := net.Dial("tcp", tl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if fds, local, pid := localFDs(tc); fds != nil || local || pid != 0 {
		t.Fatalf("a TCP peer: %v, %v, %d; want nothing", fds, local, pid)
	}
}
