package e2e

import (
	"net"
	"time"
)

// MiB is a mebibyte, for sizes of output.
const MiB = 1 << 20

// DialUnix dials a Unix socket, giving up after 5 s.
func DialUnix(path string) (net.Conn, error) { return net.DialTimeout("unix", path, 5*time.Second) }
