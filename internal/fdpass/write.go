package fdpass

import (
	"fmt"
	"net"
	"syscall"
)

// Write writes b to c with the descriptor fd (the receiver gets a copy;
// fd stays the caller's), in one sendmsg: the descriptor arrives with
// b's first byte. A write that takes less than all of b fails, since the
// rest would leave without it.
func Write(c *net.UnixConn, b []byte, fd int) error {
	n, _, err := c.WriteMsgUnix(b, syscall.UnixRights(fd), nil)
	if err == nil && n < len(b) {
		err = fmt.Errorf("fdpass: wrote %d of %d bytes", n, len(b))
	}
	return err
}
